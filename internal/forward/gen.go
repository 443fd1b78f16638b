package forward

//go:generate go run ../../cmd/xdrgen -o acked_xdr.go -pkg forward acked.x
