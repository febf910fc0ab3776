package metrics

import "testing"

// TestGaugeIdentifier: a gauge's labels go in place, after the group of
// their name, as Flink's metric store names user-group metrics; a label
// the name lacks goes before the metric's own name.
func TestGaugeIdentifier(t *testing.T) {
	for _, tc := range []struct {
		name   string
		labels []string
		want   string
	}{
		{"KafkaSourceReader.topic.partition.records-lag", []string{"topic", "bills", "partition", "0"},
			"KafkaSourceReader.topic.bills.partition.0.records-lag"},
		{"KafkaSourceReader.KafkaConsumer.records-lag-max", nil, "KafkaSourceReader.KafkaConsumer.records-lag-max"},
		{"pendingRecords", nil, "pendingRecords"},
		{"Jdbc.commitLatency", []string{"table", "totals"}, "Jdbc.table.totals.commitLatency"},
	} {
		g := &Gauge{Name: tc.name, Labels: tc.labels}
		if got := g.Identifier(); got != tc.want {
			t.Errorf("%s %v: %s, want %s", tc.name, tc.labels, got, tc.want)
		}
	}
}
