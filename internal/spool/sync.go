package spool

import (
	"errors"
	"fmt"
	"time"

	"github.com/wirehouse/wirehouse/internal/durable"
)

// Group commit. Appends write under s.mu and advance s.written, a byte
// count over all segments. An fsync batch runs without s.mu: it notes
// s.written, fsyncs the segments rolled since the previous batch, the
// current segment and, if a segment was created, the directory, then
// advances s.synced to the noted count. One batch runs at a time; under
// SyncAlways, an Append whose bytes are beyond s.synced either starts the
// next batch or waits for the running one and checks again, so every
// Append written while a batch runs is covered by the next one: N
// concurrent appenders need about two fsyncs, not N.

// waitSyncedLocked returns once the first pos bytes written are durable,
// running fsync batches as needed. It is called with s.mu held and
// releases it while waiting.
func (s *Spool) waitSyncedLocked(pos uint64) error {
	for s.synced < pos {
		if s.err != nil {
			return s.err
		}
		if s.syncing {
			s.syncDone.Wait()
			continue
		}
		s.runBatchLocked()
	}
	return nil
}

// syncBatchLocked makes everything written so far durable: it waits for a
// running batch, then runs one if anything is left to sync.
func (s *Spool) syncBatchLocked() error {
	for s.syncing {
		s.syncDone.Wait()
	}
	if s.synced < s.written || len(s.pending) > 0 || s.dirDirty {
		s.runBatchLocked()
	}
	return s.err
}

// runBatchLocked runs one fsync batch; s.mu is held on entry and exit but
// not during the fsyncs. A failed fsync is sticky (s.err): after it, the
// kernel may have dropped the dirty pages, so the spool can no longer
// promise anything about what it wrote.
func (s *Spool) runBatchLocked() {
	s.syncing = true
	target, cur, pending, dir := s.written, s.f, s.pending, s.dirDirty
	s.pending, s.dirDirty = nil, false
	s.mu.Unlock()

	var errs []error
	for _, f := range pending {
		errs = append(errs, f.Sync(), f.Close())
	}
	// Close is the only other closer of cur, and it waits for the batch.
	errs = append(errs, cur.Sync())
	if dir {
		errs = append(errs, durable.SyncDir(s.dir))
	}
	err := errors.Join(errs...)

	s.mu.Lock()
	s.syncing = false
	s.syncs.Add(1)
	if err != nil && s.err == nil {
		s.err = fmt.Errorf("spool: fsync: %w", err)
	}
	if err == nil && target > s.synced {
		s.synced = target
	}
	s.syncDone.Broadcast()
}

// syncLoop runs a batch every interval while there is something to sync,
// until Close.
func (s *Spool) syncLoop(interval time.Duration) {
	defer s.wg.Done()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		s.mu.Lock()
		if s.err == nil && !s.syncing {
			_ = s.syncBatchLocked() // a failure is sticky and reported by Append
		}
		s.mu.Unlock()
	}
}
