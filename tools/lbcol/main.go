// Command lbcol is an OpenTelemetry Collector distribution of the
// components a load-balancing gateway tier runs: the otlpreceiver, the
// loadbalancingexporter (contrib) and the otlp exporter, with the batch
// processor and the memory limiter. It is what the Collector's builder
// (ocb) generates for that component list, written out so that the
// module pins every version; scripts/forward-bench.sh builds it and
// compares it with wirehouse serve's forwarding on the same load.
//
// Run it as any Collector: lbcol --config gateway.yaml.
package main

import (
	"log"

	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/loadbalancingexporter"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/confmap/provider/yamlprovider"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/otlpexporter"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/batchprocessor"
	"go.opentelemetry.io/collector/processor/memorylimiterprocessor"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"
)

func components() (otelcol.Factories, error) {
	var f otelcol.Factories
	var err error
	if f.Receivers, err = otelcol.MakeFactoryMap[receiver.Factory](otlpreceiver.NewFactory()); err != nil {
		return f, err
	}
	if f.Processors, err = otelcol.MakeFactoryMap[processor.Factory](batchprocessor.NewFactory(), memorylimiterprocessor.NewFactory()); err != nil {
		return f, err
	}
	if f.Exporters, err = otelcol.MakeFactoryMap[exporter.Factory](loadbalancingexporter.NewFactory(), otlpexporter.NewFactory()); err != nil {
		return f, err
	}
	if f.Extensions, err = otelcol.MakeFactoryMap[extension.Factory](); err != nil {
		return f, err
	}
	if f.Connectors, err = otelcol.MakeFactoryMap[connector.Factory](); err != nil {
		return f, err
	}
	f.Telemetry = otelconftelemetry.NewFactory()
	return f, nil
}

func main() {
	set := otelcol.CollectorSettings{
		BuildInfo: component.BuildInfo{Command: "lbcol", Description: "OpenTelemetry Collector: otlpreceiver and loadbalancingexporter", Version: "0.161.0"},
		Factories: components,
		ConfigProviderSettings: otelcol.ConfigProviderSettings{
			ResolverSettings: confmap.ResolverSettings{
				ProviderFactories: []confmap.ProviderFactory{fileprovider.NewFactory(), envprovider.NewFactory(), yamlprovider.NewFactory()},
			},
		},
	}
	if err := otelcol.NewCommand(set).Execute(); err != nil {
		log.Fatal(err)
	}
}
