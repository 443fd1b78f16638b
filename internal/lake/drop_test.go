package lake

import (
	"io"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// TestWriteDrop: a Writer whose Drop selects every third row of acme's
// logs writes the other rows, in the order and with the counts a Writer
// without Drop gives them; a partition whose rows all go gets no file;
// the stats count the rows written; spans, which Drop leaves alone, are
// written whole.
func TestWriteDrop(t *testing.T) {
	hour := time.Date(2030, 5, 1, 10, 0, 0, 0, time.UTC)
	logs := synth.SeedLogs(synth.Config{Seed: 1, Start: hour.Add(20 * time.Minute), Resources: 3, ScopesPerResource: 2, TotalRecords: 300})
	spans := synth.Traces(synth.Config{Seed: 1, Start: hour.Add(20 * time.Minute), Resources: 2, ScopesPerResource: 1, TotalRecords: 200})
	thirds := func(pf *parquet.File, _ io.ReaderAt, _ int64) ([]int64, error) {
		var drop []int64
		for i := int64(0); i < pf.NumRows(); i += 3 {
			drop = append(drop, i)
		}
		return drop, nil
	}
	all := func(pf *parquet.File, _ io.ReaderAt, _ int64) ([]int64, error) {
		drop := make([]int64, pf.NumRows())
		for i := range drop {
			drop[i] = int64(i)
		}
		return drop, nil
	}
	var asked []string
	write := func(root string, drop bool) *Writer {
		cfg := testConfig(root)
		cfg.ManualFlush, cfg.SchemaVersion = true, LogsSchemaVersion // with counts and the body index
		if drop {
			cfg.Drop = func(sig otlpwire.Signal, tenant string, h time.Time) RowMatcher {
				asked = append(asked, sig.String()+" "+tenant+" "+h.Format(time.RFC3339))
				switch {
				case sig != otlpwire.SignalLogs:
					return nil
				case tenant == "gone":
					return all
				}
				return thirds
			}
		}
		w := newTestWriter(t, cfg)
		for _, tn := range []string{"acme", "gone"} {
			if _, err := w.Append(otlpwire.SignalLogs, tn, logs); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.Append(otlpwire.SignalTraces, "acme", spans); err != nil {
			t.Fatal(err)
		}
		if err := w.FlushAs(RangeName(1, 5)); err != nil {
			t.Fatal(err)
		}
		return w
	}
	plainRoot, dropRoot := t.TempDir(), t.TempDir()
	write(plainRoot, false)
	w := write(dropRoot, true)
	slices.Sort(asked)
	if want := []string{"logs acme 2030-05-01T10:00:00Z", "logs gone 2030-05-01T10:00:00Z", "traces acme 2030-05-01T10:00:00Z"}; !slices.Equal(asked, want) {
		t.Errorf("Drop asked for %v, want %v", asked, want)
	}
	part := func(root, sig, tn string) string {
		return filepath.Join(root, sig, "tenant="+tn, "date=2030-05-01", "hour=10")
	}
	plain, dropped := readLake(t, part(plainRoot, "logs", "acme")), readLake(t, part(dropRoot, "logs", "acme"))
	if len(plain) != 1 || len(dropped) != 1 {
		t.Fatalf("acme's logs files: %d without Drop, %d with", len(plain), len(dropped))
	}
	want := &lakeFile{names: plain[0].names}
	for i, row := range plain[0].rows {
		if i%3 != 0 {
			want.rows = append(want.rows, row)
		}
	}
	if got, want := rowTexts(dropped), rowTexts([]*lakeFile{want}); !slices.Equal(got, want) {
		t.Fatalf("acme's rows with Drop:\n%s", diffLines(got, want))
	}
	v, ok := dropped[0].file.Lookup(CountsKey)
	if !ok {
		t.Fatal("the file written with Drop has no counts")
	}
	if c, err := ParseCounts(v); err != nil || c.Rows() != 200 {
		t.Errorf("counts of the file written with Drop: %d rows, %v; want 200", c.Rows(), err)
	}
	if files, _ := filepath.Glob(filepath.Join(dropRoot, "logs", "tenant=gone", "*", "*", "*")); len(files) != 0 {
		t.Errorf("a partition whose rows all went has files: %v", files)
	}
	if got, want := len(readLake(t, part(dropRoot, "traces", "acme"))[0].rows), len(readLake(t, part(plainRoot, "traces", "acme"))[0].rows); got != want {
		t.Errorf("spans written with Drop: %d rows, want %d", got, want)
	}
	if st := w.Stats(); st.Rows != 200+200 || st.Files != 2 || st.Dropped != 100+300 {
		t.Errorf("stats: %d rows in %d files, %d dropped; want 400 in 2, 400 dropped", st.Rows, st.Files, st.Dropped)
	}
}
