package filesystem

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/weirstream/weir/event"
)

// Partition commit, as Flink's: a partition directory is committed (its
// success file written) once its trigger fired and a completed checkpoint
// made its part files visible. The writer keeps the pending partitions
// (PartitionCommits, a pure state machine with time and watermark passed
// in); a ready partition goes into the checkpoint's committables after
// its files, so the committer writes the success file after renaming them.

// Trigger kinds ('sink.partition-commit.trigger').
const (
	TriggerProcessTime   = "process-time"
	TriggerPartitionTime = "partition-time"
)

// CommitPolicy is a table's partition commit options.
type CommitPolicy struct {
	Trigger     string        // TriggerProcessTime or TriggerPartitionTime
	Delay       time.Duration // 'sink.partition-commit.delay'
	SuccessFile string        // 'sink.partition-commit.success-file.name'
	Extractor   *TimeExtractor
	// Zone is 'sink.partition-commit.watermark-time-zone': the zone in
	// which an extracted partition time is compared with the watermark.
	Zone *time.Location
}

// TimeExtractor is Flink's default partition time extractor: Pattern
// ('partition.time-extractor.timestamp-pattern', $col for a partition
// value; empty: the first partition value) parsed with Layout (a Go layout
// from 'partition.time-extractor.timestamp-formatter'; empty: yyyy-MM-dd
// HH:mm:ss, or yyyy-MM-dd alone).
type TimeExtractor struct {
	Cols    []string
	Pattern string
	Layout  string
}

var patternVar = regexp.MustCompile(`\$[A-Za-z_][A-Za-z0-9_]*`)

// CheckPattern returns an error naming the first $name of pattern that is
// not one of the partition columns.
func CheckPattern(pattern string, cols []string) error {
	for _, v := range patternVar.FindAllString(pattern, -1) {
		if !slices.Contains(cols, v[1:]) {
			return fmt.Errorf("'partition.time-extractor.timestamp-pattern' = '%s': %s is not a partition column (partition columns: %s)",
				pattern, v, strings.Join(cols, ", "))
		}
	}
	return nil
}

// Extract returns the partition time of the partition values (strings as
// in the directory names, unescaped).
func (x *TimeExtractor) Extract(values []string) (time.Time, error) {
	s := values[0]
	if x.Pattern != "" {
		s = x.Pattern
		// Longer names first, so $dt does not eat the start of $dtx.
		order := make([]int, len(x.Cols))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int { return len(x.Cols[b]) - len(x.Cols[a]) })
		for _, i := range order {
			s = strings.ReplaceAll(s, "$"+x.Cols[i], values[i])
		}
	}
	layouts := []string{x.Layout}
	if x.Layout == "" {
		layouts = []string{"2006-01-02 15:04:05.999999999", "2006-01-02"}
	}
	for _, l := range layouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("partition time %q does not parse as 'partition.time-extractor.timestamp-formatter' (%s)", s, layouts[0])
}

// PartitionCommits are the partitions of one writer waiting to be
// committed: for process-time the processing time they were first written,
// for partition-time the watermark they wait for.
type PartitionCommits struct {
	Policy  *CommitPolicy
	Pending map[string]int64 // partition directory → due (Unix ms)
}

// Written records a row written into partition rel (values unescaped) at
// processing time now.
func (c *PartitionCommits) Written(rel string, values []string, now time.Time) error {
	if _, ok := c.Pending[rel]; ok {
		return nil
	}
	if c.Pending == nil {
		c.Pending = map[string]int64{}
	}
	if c.Policy.Trigger == TriggerProcessTime {
		c.Pending[rel] = now.Add(c.Policy.Delay).UnixMilli()
		return nil
	}
	t, err := c.Policy.Extractor.Extract(values)
	if err != nil {
		return err
	}
	local := time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), c.Policy.Zone)
	c.Pending[rel] = local.Add(c.Policy.Delay).UnixMilli()
	return nil
}

// Ready removes and returns, sorted, the partitions whose trigger fired:
// process-time when now passed creation + delay, partition-time when the
// watermark passed partition time + delay (Flink: watermark > time +
// delay); at the end of the input every pending partition.
func (c *PartitionCommits) Ready(watermark event.Timestamp, now time.Time, endOfInput bool) []string {
	var out []string
	for rel, due := range c.Pending {
		fired := endOfInput
		if c.Policy.Trigger == TriggerProcessTime {
			fired = fired || now.UnixMilli() > due
		} else {
			fired = fired || watermark > due
		}
		if fired {
			out = append(out, rel)
			delete(c.Pending, rel)
		}
	}
	slices.Sort(out)
	return out
}

// encode and decode are the pending partitions in the writer's state.
func (c *PartitionCommits) encode() ([]byte, error) { return json.Marshal(c.Pending) }

func (c *PartitionCommits) restore(b []byte) error {
	var m map[string]int64
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("filesystem sink: restoring pending partitions: %w", err)
	}
	if c.Pending == nil {
		c.Pending = map[string]int64{}
	}
	for rel, due := range m {
		if old, ok := c.Pending[rel]; !ok || due < old {
			c.Pending[rel] = due
		}
	}
	return nil
}

// successMark prefixes a committable that commits a partition: directory
// names never hold ':' (escaped as %3A), so it cannot be a file's path.
const successMark = "partition-commit:"

// javaTokens are the DateTimeFormatter letters JavaLayout knows, longest
// first.
var javaTokens = []struct{ java, goLayout string }{
	{"yyyy", "2006"}, {"SSSSSSSSS", "000000000"}, {"SSSSSS", "000000"}, {"SSS", "000"},
	{"MM", "01"}, {"dd", "02"}, {"HH", "15"}, {"mm", "04"}, {"ss", "05"},
}

// JavaLayout turns a Java DateTimeFormatter pattern of the letters yyyy MM
// dd HH mm ss S… (and literal separators) into a Go time layout.
func JavaLayout(p string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(p); {
		matched := false
		for _, t := range javaTokens {
			if strings.HasPrefix(p[i:], t.java) {
				if t.java[0] == 'S' && !strings.HasSuffix(b.String(), ".") {
					return "", fmt.Errorf("fractions of a second (%s) must follow a '.'", t.java)
				}
				b.WriteString(t.goLayout)
				i += len(t.java)
				matched = true
				break
			}
		}
		if matched {
			continue
		}
		c := p[i]
		if (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '\'' {
			return "", fmt.Errorf("pattern letter %q is not supported (supported: yyyy MM dd HH mm ss SSS)", c)
		}
		b.WriteByte(c)
		i++
	}
	return b.String(), nil
}
