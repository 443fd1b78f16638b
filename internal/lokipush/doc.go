// Package lokipush reads the bodies of Loki's push API
// (POST /loki/api/v1/push) and writes each as an OTLP
// ExportLogsServiceRequest in protobuf, the request the receiver hands to
// the logs pipeline (spool, lake) as if it had come over OTLP/HTTP. It
// holds Loki's push wire format alone; the receiver does the HTTP,
// credentials, tenants, in-flight budget and acknowledgement.
//
// Two bodies, from Loki's HTTP API documentation (Loki is AGPL-3.0: none
// of its code, and no module of its repository, is used here):
//
//   - protobuf (application/x-protobuf): PushRequest{streams=1
//     StreamAdapter{labels=1 "{a=\"b\"}", entries=2 EntryAdapter{
//     timestamp=1 {seconds=1, nanos=2}, line=2, structuredMetadata=3
//     {name=1, value=2}}}}, snappy-compressed (block format) as sent;
//     Proto takes it decoded. Read with protowire, no generated structs.
//   - JSON (application/json): {"streams": [{"stream": {labels},
//     "values": [["<unix ns>", "<line>", {structured metadata}]]}]},
//     timestamps and lines as JSON strings, unknown keys ignored.
//
// The mapping, as the Collector's lokireceiver maps a push
// (pkg/translator/loki's PushRequestToLogs), but for where the labels go:
//
//   - each stream is a ResourceLogs whose resource attributes are its
//     labels (lokireceiver puts them on every record), so the lake groups
//     a stream's lines and Loki's API gives them back as one stream;
//     service_name is service.name (the lake's service, and the name the
//     Loki API gives back as service_name); a stream without one takes
//     its service.name from the first of service, app, application, ...,
//     job it has, as Loki 3 discovers a service name (serviceLabels);
//     labels named __x are dropped, as lokireceiver drops them; the
//     resource attribute loki.resource.labels lists the others (the
//     Collector's Loki exporter's hint: Loki's read API takes them as
//     the stream's labels, all index labels);
//   - structured metadata are the record's attributes, the line its body
//     (a string), the entry's timestamp its time (lokireceiver's
//     use_incoming_timestamp), now its observed time; no scope, no
//     severity.
//
// Entries Loki would refuse are left out and counted, with Loki's reason
// (Stats): a line longer than MaxLineBytes (line_too_long), a time older
// than MaxAge or later than MaxAhead from now (greater_than_max_sample_age,
// too_far_in_future); a stream whose labels do not parse, are missing,
// number more than MaxLabelNames or hold a name or value past its length
// limit is left out whole. A body that does not decode is an error
// (ErrMalformed), nothing of it kept. The defaults are Loki's.
//
// TestRandomPushes holds the mapping: random pushes, as protobuf and as
// JSON, give the records their generator says, field by field. The
// Collector's lokireceiver is no oracle here: the module proxy serves
// none from v0.157.0 on, and it links Loki's push package. FuzzProto and
// FuzzJSON feed any bytes.
package lokipush
