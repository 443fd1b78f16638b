package lake

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/wirehouse/wirehouse/internal/bucket"
)

// DataFiles lists the data files (ParseDataFile) whose names start with
// prefix, as a reader must count them: a merge swaps its inputs for its
// output with an upload and then deletes, so for a while a partition holds
// both, and its intent (.compact, written before the output) names them.
// In a partition with an intent whose output is listed, DataFiles leaves
// the intent's inputs out; when the intent is gone by the time it is read
// (the merge ended meanwhile), the partition is listed again. So every row
// is counted once whatever moment a merge is at, but for a merge that
// both begins and ends within one listing of its partition.
//
// Readers that glob the bucket (DuckDB, pyarrow, Trino) see a merge's
// inputs and output together for the seconds between its upload and its
// deletes; docs/ARCHITECTURE.md says how they can leave them out.
func DataFiles(ctx context.Context, b bucket.Bucket, prefix string) ([]DataFile, error) {
	byDir := map[string][]DataFile{}
	intents := map[string]bool{}
	var order []string
	add := func(dir string) {
		if _, ok := byDir[dir]; !ok {
			byDir[dir] = nil
			order = append(order, dir)
		}
	}
	for a, err := range b.List(ctx, prefix) {
		if err != nil {
			return nil, fmt.Errorf("list the lake: %w", err)
		}
		p, file, ok := parseObject(a.Name)
		if !ok {
			continue
		}
		dir := p.dir()
		if file == intentFile {
			intents[dir] = true
			add(dir)
			continue
		}
		if f, ok := ParseDataFile(a); ok {
			add(dir)
			byDir[dir] = append(byDir[dir], f)
		}
	}
	for dir := range intents {
		files, err := settle(ctx, b, dir, byDir[dir])
		if err != nil {
			return nil, err
		}
		byDir[dir] = files
	}
	var out []DataFile
	for _, dir := range order {
		out = append(out, byDir[dir]...)
	}
	return out, nil
}

// settle returns the files of partition dir a reader counts, given those
// listed with an intent.
func settle(ctx context.Context, b bucket.Bucket, dir string, files []DataFile) ([]DataFile, error) {
	for range 5 {
		r, err := b.Get(ctx, dir+"/"+intentFile)
		if errors.Is(err, bucket.ErrNotFound) {
			// The merge ended (or was given up) since the listing: list
			// the partition again; its files are final or have a new
			// intent.
			files, again, err := listDir(ctx, b, dir)
			if err != nil || !again {
				return files, err
			}
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read a compaction intent: %w", err)
		}
		data, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			return nil, fmt.Errorf("read a compaction intent: %w", err)
		}
		var in intent
		if json.Unmarshal(data, &in) != nil {
			return files, nil // damaged: compaction settles it; count what is there
		}
		hasOutput := false
		for _, f := range files {
			if f.Name == dir+"/"+in.Output {
				hasOutput = true
			}
		}
		if !hasOutput {
			return files, nil // the output is not in place: the inputs count
		}
		inputs := map[string]bool{}
		for _, name := range in.Inputs {
			if name != in.Output {
				inputs[dir+"/"+name] = true
			}
		}
		kept := files[:0:0]
		for _, f := range files {
			if !inputs[f.Name] {
				kept = append(kept, f)
			}
		}
		return kept, nil
	}
	return nil, fmt.Errorf("list the lake: partition %s kept changing under compaction", dir)
}

// listDir lists partition dir's data files, and whether it has an intent.
func listDir(ctx context.Context, b bucket.Bucket, dir string) ([]DataFile, bool, error) {
	var files []DataFile
	intent := false
	for a, err := range b.List(ctx, dir+"/") {
		if err != nil {
			return nil, false, fmt.Errorf("list the lake: %w", err)
		}
		if a.Name == dir+"/"+intentFile {
			intent = true
		} else if f, ok := ParseDataFile(a); ok && strings.LastIndexByte(a.Name, '/') == len(dir) {
			files = append(files, f)
		}
	}
	return files, intent, nil
}
