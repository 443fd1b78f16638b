package spool

//go:generate go run ../../cmd/xdrgen -o record_xdr.go -pkg spool record.x
