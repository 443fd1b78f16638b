// Package formatdoc reads the pages of docs/format for the tests that
// hold them to the code: a page's Markdown tables, found by the marker
// line "<!-- table: name -->" before each.
package formatdoc

import (
	"fmt"
	"strings"
)

// Table returns the rows of the Markdown table that follows the line
// "<!-- table: name -->" of page, each cell by its column's header, with
// backticks and surrounding spaces removed; an error when the page has no
// such table or a row has another number of cells than the header.
func Table(page, name string) ([]map[string]string, error) {
	marker := "<!-- table: " + name + " -->"
	i := strings.Index(page, marker)
	if i < 0 {
		return nil, fmt.Errorf("read table: the page has no %q", marker)
	}
	var header []string
	var rows []map[string]string
	for line := range strings.Lines(page[i+len(marker):]) {
		line = strings.TrimSpace(line)
		if line == "" && header == nil {
			continue
		}
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for j := range cells {
			cells[j] = strings.TrimSpace(strings.ReplaceAll(cells[j], "`", ""))
		}
		switch {
		case header == nil:
			header = cells
		case strings.Trim(strings.Join(cells, ""), "-: ") == "": // the delimiter row
		default:
			if len(cells) != len(header) {
				return nil, fmt.Errorf("read table %s: row %q has %d cells, the header %d", name, line, len(cells), len(header))
			}
			row := map[string]string{}
			for j, h := range header {
				row[h] = cells[j]
			}
			rows = append(rows, row)
		}
	}
	if header == nil {
		return nil, fmt.Errorf("read table: no table after %q", marker)
	}
	return rows, nil
}
