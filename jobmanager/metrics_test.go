package jobmanager

import "testing"

// TestSplitMetricID: a vertex metric id is <subtask>.<name>, the subtask
// one of the vertex's, written as Flink writes it (no sign, no leading 0).
func TestSplitMetricID(t *testing.T) {
	for _, c := range []struct {
		id   string
		i    int
		name string
		ok   bool
	}{
		{"0.numRecordsIn", 0, "numRecordsIn", true},
		{"4999.Source: gen.KafkaSourceReader.topic.t.partition.0.records-lag", 4999, "Source: gen.KafkaSourceReader.topic.t.partition.0.records-lag", true},
		{"5000.numRecordsIn", 0, "", false},
		{"-1.numRecordsIn", 0, "", false},
		{"01.numRecordsIn", 0, "", false},
		{"+1.numRecordsIn", 0, "", false},
		{"numRecordsIn", 0, "", false},
		{"x.numRecordsIn", 0, "", false},
	} {
		i, name, ok := splitMetricID(c.id, 5000)
		if i != c.i || name != c.name || ok != c.ok {
			t.Errorf("splitMetricID(%q) = %d, %q, %v; want %d, %q, %v", c.id, i, name, ok, c.i, c.name, c.ok)
		}
	}
}
