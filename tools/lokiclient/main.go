// Command lokiclient pushes log lines to a Loki push URL with Grafana's
// Go client, github.com/grafana/loki-client-go (Apache-2.0): snappy
// protobuf, batched, retried on 5xx and 429 as the client does. It is a
// peer for cmd/wirehouse's tests (built by make into bin/), not linked
// into wirehouse.
//
//	lokiclient --url URL --lines N --job JOB [--tenant T] [--from I]
//
// Each line is "loki-client-go line <i>" (i from --from), labelled
// job=JOB and client=loki-client-go, with structured metadata
// line_id=<i>; the client is stopped (its last batch sent) before the
// command exits and prints "pushed N".
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/grafana/loki-client-go/loki"
	"github.com/grafana/loki/pkg/push"
	"github.com/prometheus/common/model"
)

func main() {
	url := flag.String("url", "", "the push URL")
	lines := flag.Int("lines", 100, "lines to push")
	from := flag.Int("from", 0, "the first line's number")
	job := flag.String("job", "lokiclient", "the job label")
	tenant := flag.String("tenant", "", "X-Scope-OrgID")
	flag.Parse()
	cfg, err := loki.NewDefaultConfig(*url)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	cfg.BatchWait, cfg.TenantID = 100*time.Millisecond, *tenant
	c, err := loki.New(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ls := model.LabelSet{"job": model.LabelValue(*job), "client": "loki-client-go"}
	for i := *from; i < *from+*lines; i++ {
		md := push.LabelsAdapter{{Name: "line_id", Value: fmt.Sprint(i)}}
		if err := c.HandleWithMetadata(ls, time.Now(), fmt.Sprintf("loki-client-go line %d", i), md); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	c.Stop()
	fmt.Println("pushed", *lines)
}
