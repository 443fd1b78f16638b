package lakeread

import (
	"testing"

	"github.com/wirehouse/wirehouse/internal/lake"
)

// closeCounter is a bucket.Object that counts its closes.
type closeCounter struct{ closed int }

func (c *closeCounter) ReadAt(p []byte, off int64) (int, error) { return 0, nil }
func (c *closeCounter) Close() error                            { c.closed++; return nil }
func (c *closeCounter) Size() int64                             { return 0 }

// TestGramsTablesHoldFiles: a kept file is closed once, when its table
// has been dropped and the last query holding it lets go, never while a
// query holds it; tables past the bound are not kept, and their files
// stay the caller's.
func TestGramsTablesHoldFiles(t *testing.T) {
	c := &gramsTables{max: 1000}
	table := &lake.GramsTable{Bytes: 400}
	k1, k2, k3 := fileKey{name: "p/a"}, fileKey{name: "p/b"}, fileKey{name: "p/c"}
	o1, o2, o3 := &closeCounter{}, &closeCounter{}, &closeCounter{}
	if !c.put(k1, table, o1) || !c.put(k2, table, o2) {
		t.Fatal("tables under the bound not kept with their files")
	}
	if c.put(k3, table, o3) {
		t.Fatal("a table past the bound kept")
	}
	if _, _, ok := c.get(k3); ok {
		t.Fatal("a table past the bound found")
	}
	// The putting queries let go; a query holds k1's file again.
	c.release(k1, o1)
	c.release(k2, o2)
	if _, obj, ok := c.get(k1); !ok || obj != o1 {
		t.Fatalf("get: %v, %v", obj, ok)
	}
	// A listing without either file drops both: k2's file, held by
	// none, closes; k1's waits for its query.
	c.keepOnly("p/", map[fileKey]bool{})
	if o2.closed != 1 || o1.closed != 0 {
		t.Fatalf("after the drop: closes %d (held) and %d (free), want 0 and 1", o1.closed, o2.closed)
	}
	c.release(k1, o1)
	if o1.closed != 1 {
		t.Fatalf("the held file closed %d times after its query let go, want 1", o1.closed)
	}
	if c.used != 0 || c.open != 0 || len(c.gone) != 0 {
		t.Fatalf("after the drops: used %d, open %d, gone %d", c.used, c.open, len(c.gone))
	}
	// A file with no region costs the bound little and keeps no file.
	if c.put(k3, nil, o3) {
		t.Fatal("a file without a table kept open")
	}
	c.close()
	if o3.closed != 0 {
		t.Fatal("a file the tables never took was closed by them")
	}
}
