package lake

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/internal/bucket"
	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// put writes a file of size bytes at root/rel, creating directories.
func put(t *testing.T, root, rel string, size int) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, make([]byte, size), 0o644); err != nil {
		t.Fatal(err)
	}
}

// tree lists the files under root, slash-separated and sorted.
func tree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// TestPruneRules: age removes the hours that ended before the cutoff, size
// then removes the oldest hours of any signal and tenant but never the
// current one; stale temporary files and an interrupted prune's trash go,
// names outside the layout stay.
func TestPruneRules(t *testing.T) {
	root := t.TempDir()
	now := time.Date(2026, 1, 2, 3, 30, 0, 0, time.UTC)
	put(t, root, "logs/tenant=a/date=2026-01-01/hour=00/a.parquet", 100)
	put(t, root, "logs/tenant=a/date=2026-01-01/hour=00/b.parquet", 50)
	put(t, root, "logs/tenant=a/date=2026-01-01/hour=01/a.parquet", 200)
	put(t, root, "logs/tenant=a/date=2026-01-01/hour=01/.old.parquet.tmp", 999)
	put(t, root, "logs/tenant=a/date=2026-01-01/hour=01/.new.parquet.tmp", 999)
	put(t, root, "traces/tenant=b/date=2026-01-01/hour=05/a.parquet", 300)
	put(t, root, "logs/tenant=a/date=2026-01-02/hour=02/a.parquet", 400)
	put(t, root, "logs/tenant=a/date=2026-01-02/hour=03/a.parquet", 5000) // the current hour
	// Not the layout: left alone.
	put(t, root, "logs/tenant=a/date=someday/hour=00/a.parquet", 7)
	put(t, root, "logs/tenant=a/date=2026-01-01/hour=7/a.parquet", 7)
	put(t, root, "logs/tenant=a/date=2026-01-01/hour=24/a.parquet", 7)
	put(t, root, "logs/README", 7)
	put(t, root, ".flush", 7)
	// An interrupted prune's leftover.
	put(t, root, ".trash/logs_tenant=a_date=2025-12-31_hour=23/a.parquet", 7)
	old := now.Add(-2 * staleTemp)
	if err := os.Chtimes(filepath.Join(root, "logs/tenant=a/date=2026-01-01/hour=01/.old.parquet.tmp"), old, old); err != nil {
		t.Fatal(err)
	}

	// Nothing to do without limits but the temporary file and the trash.
	p, err := Prune(root, Retention{}, now)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Pruned{Temps: 1, Kept: 100 + 50 + 200 + 300 + 400 + 5000, KeptFiles: 6}); p != want {
		t.Errorf("Prune without limits = %+v, want %+v", p, want)
	}
	hour01 := filepath.Join(root, "logs/tenant=a/date=2026-01-01/hour=01")
	if _, err := os.Stat(filepath.Join(hour01, ".old.parquet.tmp")); !os.IsNotExist(err) {
		t.Errorf("stale temporary file left: %v", err)
	}
	if _, err := os.Stat(filepath.Join(hour01, ".new.parquet.tmp")); err != nil {
		t.Errorf("fresh temporary file (maybe another process's write) removed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, trashDir, "logs_tenant=a_date=2025-12-31_hour=23")); !os.IsNotExist(err) {
		t.Errorf("an interrupted prune's trash left: %v", err)
	}

	// Age 26h: the cutoff is 2026-01-01T01:30, so hour 00 (ended 01:00)
	// goes and hour 01 (ends 02:00) stays.
	p, err = Prune(root, Retention{MaxAge: 26 * time.Hour}, now)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Pruned{Partitions: 1, Files: 2, Bytes: 150, Kept: 200 + 300 + 400 + 5000, KeptFiles: 4}); p != want {
		t.Errorf("Prune by age = %+v, want %+v", p, want)
	}

	// Size: the oldest go first, whatever their signal or tenant, until
	// the rest fits; the current hour stays though it alone is over.
	p, err = Prune(root, Retention{MaxSize: 5400}, now)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Pruned{Partitions: 2, Files: 2, Bytes: 500, Kept: 400 + 5000, KeptFiles: 2}); p != want {
		t.Errorf("Prune by size = %+v, want %+v", p, want)
	}
	p, err = Prune(root, Retention{MaxSize: 1}, now)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Pruned{Partitions: 1, Files: 1, Bytes: 400, Kept: 5000, KeptFiles: 1}); p != want {
		t.Errorf("Prune to 1 byte = %+v, want %+v", p, want)
	}

	want := []string{
		".flush",
		"logs/README",
		"logs/tenant=a/date=2026-01-01/hour=24/a.parquet",
		"logs/tenant=a/date=2026-01-01/hour=7/a.parquet",
		"logs/tenant=a/date=2026-01-02/hour=03/a.parquet",
		"logs/tenant=a/date=someday/hour=00/a.parquet",
	}
	if got := tree(t, root); !slices.Equal(got, want) {
		t.Errorf("lake after pruning:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, err := os.Stat(filepath.Join(root, trashDir)); !os.IsNotExist(err) {
		t.Errorf("trash directory left: %v", err)
	}
	// Emptied date directories are removed; partly emptied ones stay.
	if _, err := os.Stat(filepath.Join(root, "traces/tenant=b/date=2026-01-01")); !os.IsNotExist(err) {
		t.Errorf("empty date directory left: %v", err)
	}

	// Records from the future: beyond the next hour they go first when
	// the lake is over its size, the farthest first; the next hour stays.
	put(t, root, "logs/tenant=b/date=2026-01-02/hour=04/a.parquet", 100) // the next hour
	put(t, root, "logs/tenant=b/date=2026-01-03/hour=00/a.parquet", 300)
	put(t, root, "logs/tenant=b/date=2099-01-01/hour=00/a.parquet", 200)
	p, err = Prune(root, Retention{MaxSize: 5150, MaxAge: time.Hour}, now)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Pruned{Partitions: 2, Files: 2, Bytes: 500, Kept: 5100, KeptFiles: 2}); p != want {
		t.Errorf("Prune with future partitions = %+v, want %+v", p, want)
	}
	if _, err := os.Stat(filepath.Join(root, "logs/tenant=b/date=2026-01-02/hour=04/a.parquet")); err != nil {
		t.Errorf("the next hour was removed: %v", err)
	}

	if _, err := Prune(root, Retention{MaxAge: -1}, now); err == nil {
		t.Error("negative retention accepted")
	}
	if p, err := Prune(filepath.Join(root, "missing"), Retention{MaxAge: time.Hour}, now); err != nil || p != (Pruned{}) {
		t.Errorf("Prune of a lake not yet written = %+v, %v", p, err)
	}
}

// TestPruneWriterLayout: Prune reads the partitions the Writer writes.
func TestPruneWriterLayout(t *testing.T) {
	root := t.TempDir()
	w := newTestWriter(t, testConfig(root))
	day1 := time.Date(2030, 5, 1, 10, 10, 0, 0, time.UTC)
	day2 := time.Date(2030, 5, 2, 12, 10, 0, 0, time.UTC)
	rows := map[time.Time]int{}
	for _, start := range []time.Time{day1, day2} {
		for sig, body := range map[otlpwire.Signal][]byte{
			otlpwire.SignalLogs:   synth.SeedLogs(synth.Config{Seed: 1, Start: start, Resources: 2, ScopesPerResource: 2, TotalRecords: 100}),
			otlpwire.SignalTraces: synth.Traces(synth.Config{Seed: 1, Start: start, Resources: 2, ScopesPerResource: 1, TotalRecords: 50}),
		} {
			n, err := w.Append(sig, "acme", body)
			if err != nil {
				t.Fatal(err)
			}
			rows[start] += n
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	before := readLake(t, root)
	if len(before) != 4 {
		t.Fatalf("%d files written, want one per signal and day", len(before))
	}
	p, err := Prune(root, Retention{MaxAge: time.Hour}, day2.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if p.Partitions != 2 || p.Files != 2 || p.KeptFiles != 2 {
		t.Errorf("Prune = %+v, want day 1's two partitions removed and day 2's two files kept", p)
	}
	left := 0
	var kept int64
	for _, f := range readLake(t, root) {
		if !strings.Contains(f.path, "date=2030-05-02") {
			t.Errorf("%s kept, older than the retention", f.path)
		}
		left += len(f.rows)
		st, err := os.Stat(f.path)
		if err != nil {
			t.Fatal(err)
		}
		kept += st.Size()
	}
	if left != rows[day2] || kept != p.Kept {
		t.Errorf("left %d rows in %d bytes, want day 2's %d rows; Prune says %d bytes", left, kept, rows[day2], p.Kept)
	}
	for _, sig := range []string{"logs", "traces"} {
		if _, err := os.Stat(filepath.Join(root, sig, "tenant=acme", "date=2030-05-01")); !os.IsNotExist(err) {
			t.Errorf("%s: day 1's date directory left: %v", sig, err)
		}
	}
}

// TestPruneUsage: what the lake keeps after a pass, summed by signal and
// tenant, leaves out the partitions the pass removed and files that are
// not Parquet.
func TestPruneUsage(t *testing.T) {
	root := t.TempDir()
	now := time.Date(2026, 1, 2, 3, 30, 0, 0, time.UTC)
	put(t, root, "logs/tenant=a/date=2026-01-01/hour=00/a.parquet", 100) // removed by age
	put(t, root, "logs/tenant=a/date=2026-01-02/hour=02/a.parquet", 10)
	put(t, root, "logs/tenant=a/date=2026-01-02/hour=03/a.parquet", 20)
	put(t, root, "logs/tenant=a/date=2026-01-02/hour=03/.b.parquet.tmp", 999)
	put(t, root, "logs/tenant=b/date=2026-01-02/hour=03/a.parquet", 30)
	put(t, root, "traces/tenant=a/date=2026-01-02/hour=03/a.parquet", 40)
	put(t, root, "traces/tenant=a/date=2026-01-02/hour=03/b.parquet", 50)
	p, usage, err := PruneUsage(t.Context(), bucket.NewLocal(root), Retention{MaxAge: 3 * time.Hour}, now)
	if err != nil {
		t.Fatal(err)
	}
	want := []Usage{
		{Signal: "logs", Tenant: "a", Files: 2, Bytes: 30},
		{Signal: "logs", Tenant: "b", Files: 1, Bytes: 30},
		{Signal: "traces", Tenant: "a", Files: 2, Bytes: 90},
	}
	if !slices.Equal(usage, want) || p.Partitions != 1 || p.Kept != 150 || p.KeptFiles != 5 {
		t.Errorf("PruneUsage = %+v, %+v; want 1 partition removed, 150 bytes in 5 files kept: %+v", p, usage, want)
	}
}

// TestPruneTenantAge: a tenant's own age replaces MaxAge for its
// partitions, of every signal, shorter or longer; other tenants keep
// MaxAge.
func TestPruneTenantAge(t *testing.T) {
	root := t.TempDir()
	now := time.Date(2026, 1, 10, 12, 30, 0, 0, time.UTC)
	for _, rel := range []string{
		"logs/tenant=a/date=2026-01-10/hour=09/a.parquet",   // 3 h old: a keeps 1 h
		"traces/tenant=a/date=2026-01-10/hour=09/a.parquet", // every signal
		"logs/tenant=a/date=2026-01-10/hour=12/a.parquet",   // current
		"logs/tenant=b/date=2026-01-01/hour=09/a.parquet",   // 9 days: b keeps 30 d
		"logs/tenant=c/date=2026-01-01/hour=09/a.parquet",   // 9 days: c keeps MaxAge, 7 d
		"logs/tenant=c/date=2026-01-10/hour=09/a.parquet",
	} {
		put(t, root, rel, 10)
	}
	p, err := Prune(root, Retention{MaxAge: 7 * 24 * time.Hour, TenantMaxAge: func(tenant string) time.Duration {
		switch tenant {
		case "a":
			return time.Hour
		case "b":
			return 30 * 24 * time.Hour
		}
		return 0
	}}, now)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"logs/tenant=a/date=2026-01-10/hour=12/a.parquet",
		"logs/tenant=b/date=2026-01-01/hour=09/a.parquet",
		"logs/tenant=c/date=2026-01-10/hour=09/a.parquet",
	}
	if got := tree(t, root); !slices.Equal(got, want) || p.Partitions != 3 {
		t.Errorf("left %v (%d removed), want %v", got, p.Partitions, want)
	}
}
