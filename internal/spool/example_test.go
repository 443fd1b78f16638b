package spool_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/wirehouse/wirehouse/internal/spool"
	"github.com/wirehouse/wirehouse/otlpwire"
)

func Example() {
	dir, err := os.MkdirTemp("", "spool")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	cfg := spool.DefaultConfig()
	cfg.Dir = dir
	cfg.Sync, cfg.SyncInterval = spool.SyncInterval, 100*time.Millisecond
	cfg.MaxBytes = 1 << 30
	s, err := spool.Open(cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	for _, r := range s.Repairs() {
		log.Print(r) // segment, offset and what was dropped
	}

	// The receiving side: one Append per accepted request.
	for _, body := range []string{"request 1", "request 2"} {
		seq, err := s.Append(otlpwire.SignalLogs, "acme", time.Now(), []byte(body))
		if err != nil {
			log.Fatal(err) // errors.Is(err, spool.ErrFull): answer 429 and retry later
		}
		fmt.Println("appended", seq)
	}

	// A sink: read, deliver, commit.
	c, err := s.Consumer("lake")
	if err != nil {
		log.Fatal(err)
	}
	for range 2 {
		r, err := c.Next(context.Background())
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%d %v %s %q\n", r.Seq, r.Signal, r.Tenant, r.Payload)
	}
	if err := c.Commit(2); err != nil {
		log.Fatal(err)
	}
	fmt.Println("committed", c.Committed())
	// Output:
	// appended 1
	// appended 2
	// 1 logs acme "request 1"
	// 2 logs acme "request 2"
	// committed 2
}
