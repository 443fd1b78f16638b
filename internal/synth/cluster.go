package synth

import (
	"math/rand/v2"
	"strconv"
	"sync"
)

// The Kubernetes cluster the metrics describe, shaped like the OTLP write
// benchmark of seed 003: 40 metric names, 500 pods on 100 nodes in 10
// namespaces, and 40 labels (data point attributes) per series. It is the
// same for every seed; seeds choose which series a request carries and
// their values.

const (
	clusterPods       = 500
	clusterNodes      = 100
	clusterNamespaces = 10
)

// metricKind is the data kind of a metric.
type metricKind int

const (
	kindGauge     metricKind = iota
	kindSum                  // monotonic, cumulative
	kindUpDownSum            // non-monotonic, cumulative
	kindHistogram
	kindExpHistogram
	kindSummary
	numKinds
)

// metricDef is one of the 40 metric names.
type metricDef struct {
	name, unit, description string
	kind                    metricKind
	isInt                   bool      // value type of gauges and sums
	scale                   float64   // typical magnitude of values (gauges, observations) or rate (sums)
	bounds                  []float64 // explicit bounds of histograms
	quantiles               []float64 // quantiles of summaries
}

var (
	durationBounds = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
	sizeBounds     = []float64{100, 1000, 10_000, 100_000, 1e6, 1e7}
	gcQuantiles    = []float64{0, 0.25, 0.5, 0.75, 1}
	latQuantiles   = []float64{0.5, 0.9, 0.99}
)

// metricDefs are the 40 metric names, by kind.
var metricDefs = []metricDef{
	{name: "container_memory_working_set_bytes", unit: "By", description: "Current working set of the container in bytes", kind: kindGauge, isInt: true, scale: 5e8},
	{name: "container_memory_rss", unit: "By", description: "Size of RSS in bytes", kind: kindGauge, isInt: true, scale: 3e8},
	{name: "container_spec_cpu_quota", unit: "1", description: "CPU quota of the container", kind: kindGauge, isInt: true, scale: 1e5},
	{name: "container_threads", unit: "{thread}", description: "Number of threads running inside the container", kind: kindGauge, isInt: true, scale: 40},
	{name: "kube_pod_status_ready", unit: "1", description: "Describes whether the pod is ready to serve requests", kind: kindGauge, isInt: true, scale: 1},
	{name: "kube_deployment_status_replicas_available", unit: "{replica}", description: "The number of available replicas per deployment", kind: kindGauge, isInt: true, scale: 5},
	{name: "kube_pod_container_resource_requests", unit: "{cpu}", description: "The number of requested request resource by a container", kind: kindGauge, scale: 0.5},
	{name: "node_memory_MemAvailable_bytes", unit: "By", description: "Memory information field MemAvailable_bytes", kind: kindGauge, isInt: true, scale: 8e9},
	{name: "node_filesystem_avail_bytes", unit: "By", description: "Filesystem space available to non-root users in bytes", kind: kindGauge, isInt: true, scale: 5e10},
	{name: "node_load1", unit: "1", description: "1m load average", kind: kindGauge, scale: 2},

	{name: "container_cpu_usage_seconds_total", unit: "s", description: "Cumulative cpu time consumed in seconds", kind: kindSum, scale: 0.2},
	{name: "container_network_receive_bytes_total", unit: "By", description: "Cumulative count of bytes received", kind: kindSum, isInt: true, scale: 2e4},
	{name: "container_network_transmit_bytes_total", unit: "By", description: "Cumulative count of bytes transmitted", kind: kindSum, isInt: true, scale: 1.5e4},
	{name: "container_fs_reads_total", unit: "{read}", description: "Cumulative count of reads completed", kind: kindSum, isInt: true, scale: 3},
	{name: "container_fs_writes_bytes_total", unit: "By", description: "Cumulative count of bytes written", kind: kindSum, isInt: true, scale: 4e3},
	{name: "node_cpu_seconds_total", unit: "s", description: "Seconds the CPUs spent in each mode", kind: kindSum, scale: 0.9},
	{name: "node_network_receive_packets_total", unit: "{packet}", description: "Network device statistic receive_packets", kind: kindSum, isInt: true, scale: 800},
	{name: "node_disk_io_time_seconds_total", unit: "s", description: "Total seconds spent doing I/Os", kind: kindSum, scale: 0.05},
	{name: "kube_pod_container_status_restarts_total", unit: "{restart}", description: "The number of container restarts per container", kind: kindSum, isInt: true, scale: 1e-5},
	{name: "http_requests_total", unit: "{request}", description: "Total number of HTTP requests", kind: kindSum, isInt: true, scale: 30},
	{name: "grpc_server_handled_total", unit: "{rpc}", description: "Total number of RPCs completed on the server", kind: kindSum, isInt: true, scale: 50},
	{name: "process_cpu_seconds_total", unit: "s", description: "Total user and system CPU time spent in seconds", kind: kindSum, scale: 0.1},

	{name: "http_server_active_requests", unit: "{request}", description: "Number of active HTTP server requests", kind: kindUpDownSum, isInt: true, scale: 20},
	{name: "process_open_fds", unit: "{file}", description: "Number of open file descriptors", kind: kindUpDownSum, isInt: true, scale: 100},
	{name: "go_goroutines", unit: "{goroutine}", description: "Number of goroutines that currently exist", kind: kindUpDownSum, isInt: true, scale: 200},
	{name: "db_client_connections_usage", unit: "{connection}", description: "The number of connections that are currently in state described by the state attribute", kind: kindUpDownSum, isInt: true, scale: 16},

	{name: "http_request_duration_seconds", unit: "s", description: "Duration of HTTP requests", kind: kindHistogram, scale: 0.1, bounds: durationBounds},
	{name: "http_response_size_bytes", unit: "By", description: "Size of HTTP responses", kind: kindHistogram, scale: 5e3, bounds: sizeBounds},
	{name: "grpc_server_handling_seconds", unit: "s", description: "Histogram of response latency of gRPC that had been application-level handled by the server", kind: kindHistogram, scale: 0.02, bounds: durationBounds},
	{name: "apiserver_request_duration_seconds", unit: "s", description: "Response latency distribution in seconds for each verb, resource and subresource", kind: kindHistogram, scale: 0.05, bounds: durationBounds},
	{name: "etcd_disk_wal_fsync_duration_seconds", unit: "s", description: "The latency distributions of fsync called by WAL", kind: kindHistogram, scale: 0.004, bounds: durationBounds},
	{name: "kubelet_pod_start_duration_seconds", unit: "s", description: "Duration in seconds from kubelet seeing a pod for the first time to the pod starting to run", kind: kindHistogram, scale: 3, bounds: durationBounds},

	{name: "http_server_request_duration", unit: "s", description: "Duration of HTTP server requests", kind: kindExpHistogram, scale: 0.08},
	{name: "http_client_request_duration", unit: "s", description: "Duration of HTTP client requests", kind: kindExpHistogram, scale: 0.12},
	{name: "rpc_server_duration", unit: "ms", description: "Measures the duration of inbound RPC", kind: kindExpHistogram, scale: 15},
	{name: "db_client_operation_duration", unit: "s", description: "Duration of database client operations", kind: kindExpHistogram, scale: 0.01},

	{name: "go_gc_duration_seconds", unit: "s", description: "A summary of the wall-time pause (stop-the-world) duration in garbage collection cycles", kind: kindSummary, scale: 2e-4, quantiles: gcQuantiles},
	{name: "prometheus_engine_query_duration_seconds", unit: "s", description: "Query timings", kind: kindSummary, scale: 0.01, quantiles: latQuantiles},
	{name: "kubelet_pleg_relist_interval_seconds", unit: "s", description: "Interval in seconds between relisting in PLEG", kind: kindSummary, scale: 1, quantiles: latQuantiles},
	{name: "coredns_dns_request_duration_seconds", unit: "s", description: "Histogram of the time (in seconds) each request took", kind: kindSummary, scale: 0.002, quantiles: latQuantiles},
}

// seriesKeys are the 40 labels of every series; the fixture uses the first few.
var seriesKeys = [...]string{
	"namespace", "pod", "container", "node", "deployment", "replicaset", "instance", "job",
	"cluster", "region", "zone", "app", "app_kubernetes_io_name", "app_kubernetes_io_instance",
	"app_kubernetes_io_version", "app_kubernetes_io_component", "app_kubernetes_io_part_of",
	"app_kubernetes_io_managed_by", "helm_sh_chart", "team", "owner", "environment", "tier",
	"image", "image_id", "container_id", "pod_ip", "host_ip", "node_pool", "instance_type",
	"os", "arch", "kernel_version", "kubelet_version", "service", "endpoint", "scrape_job",
	"uid", "pod_template_hash", "priority_class",
}

// pod is a pod of the cluster: the values of its series' labels and how
// long it has run at baseTime.
type pod struct {
	labels [len(seriesKeys)]string
	uptime uint64 // ns
	node   int
}

// node is a node of the cluster.
type node struct {
	name, ip, zone, pool, instanceType string
}

type cluster struct {
	metrics []metricDef // round-robin over kinds, so any six adjacent names hold every kind
	nodes   [clusterNodes]node
	pods    [clusterPods]pod
}

var (
	theCluster     cluster
	theClusterOnce sync.Once
)

// getCluster returns the cluster, building it on first use.
func getCluster() *cluster {
	theClusterOnce.Do(theCluster.build)
	return &theCluster
}

var (
	namespaces    = [clusterNamespaces]string{"default", "kube-system", "monitoring", "payments", "checkout", "search", "ingress-nginx", "logging", "data", "platform"}
	instanceTypes = []string{"m6i.xlarge", "m6i.2xlarge", "c6i.2xlarge", "r6i.xlarge"}
	teams         = []string{"platform", "payments", "storefront", "search", "sre", "data"}
	tiersK8s      = []string{"frontend", "backend", "cache", "database"}
	components    = []string{"server", "worker", "api", "controller"}
	priorities    = []string{"system-node-critical", "system-cluster-critical", "high-priority", "default"}
)

func (c *cluster) build() {
	r := rand.New(rand.NewPCG(3, 0x0794d13b6aba38b8))
	byKind := make([][]metricDef, numKinds)
	for _, m := range metricDefs {
		byKind[m.kind] = append(byKind[m.kind], m)
	}
	for i := 0; len(c.metrics) < len(metricDefs); i++ {
		for _, ms := range byKind {
			if i < len(ms) {
				c.metrics = append(c.metrics, ms[i])
			}
		}
	}

	hexStr := func(n int) string {
		const digits = "0123456789abcdef"
		b := make([]byte, n)
		for i := range b {
			b[i] = digits[r.IntN(16)]
		}
		return string(b)
	}
	for i := range c.nodes {
		ip := "10.0." + strconv.Itoa(i/50) + "." + strconv.Itoa(10+i%50*4)
		c.nodes[i] = node{
			name:         "ip-" + replaceDots(ip) + ".ec2.internal",
			ip:           ip,
			zone:         "us-east-1" + string(rune('a'+i%3)),
			pool:         "pool-" + strconv.Itoa(i%4),
			instanceType: instanceTypes[i%len(instanceTypes)],
		}
	}
	for i := range c.pods {
		p := &c.pods[i]
		ns := namespaces[i%clusterNamespaces]
		app := services[(i/clusterNamespaces)%len(services)].name
		hash := hexStr(10)
		rs := app + "-" + hash
		name := rs + "-" + hexStr(5)
		p.node = (i * 37) % clusterNodes
		n := &c.nodes[p.node]
		version := "1." + strconv.Itoa(r.IntN(20)) + "." + strconv.Itoa(r.IntN(10))
		podIP := "10.1." + strconv.Itoa(i/250) + "." + strconv.Itoa(i%250+2)
		p.uptime = uint64(600+r.IntN(30*24*3600)) * 1e9
		p.labels = [len(seriesKeys)]string{
			ns, name, app, n.name, app, rs, podIP + ":9090", "kubernetes-pods",
			"prod-us-east-1", "us-east-1", n.zone, app, app, app + "-" + ns,
			version, components[i%len(components)], "shop",
			"Helm", app + "-" + version, teams[i%len(teams)], teams[(i+1)%len(teams)], "production", tiersK8s[i%len(tiersK8s)],
			"registry.example.com/" + app + ":" + version, "sha256:" + hexStr(64), "containerd://" + hexStr(64), podIP, n.ip, n.pool, n.instanceType,
			"linux", "amd64", "6.1.102-111.182.amzn2023.x86_64", "v1.31.2-eks-7f9249a", app, "http-metrics", "kubernetes-pods",
			hexStr(8) + "-" + hexStr(4) + "-4" + hexStr(3) + "-a" + hexStr(3) + "-" + hexStr(12), hash, priorities[i%len(priorities)],
		}
	}
}

func replaceDots(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c == '.' {
			b[i] = '-'
		}
	}
	return string(b)
}
