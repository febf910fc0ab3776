package kafka

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/weirstream/weir/delivery"
	"github.com/weirstream/weir/duration"
)

// OptionError is a bad value of a table option read by SourceOptionsFromMap
// or SinkOptionsFromMap, in Flink's terms: "'key' = 'value': what is
// wanted". It matches ErrConfig under errors.Is.
type OptionError struct {
	Key, Value string
	Want       string // what the option takes, e.g. "want fail or skip"
}

// Error implements error.
func (e *OptionError) Error() string { return fmt.Sprintf("'%s' = '%s': %s", e.Key, e.Value, e.Want) }

// Is makes an OptionError an ErrConfig.
func (e *OptionError) Is(target error) bool { return target == ErrConfig }

// SourceOptionsFromMap reads the source options of a Flink SQL kafka table's
// WITH clause, by Flink's names: properties.bootstrap.servers,
// properties.group.id, scan.startup.mode (group-offsets, earliest-offset,
// latest-offset, timestamp with scan.startup.timestamp-millis; unset: the
// connector's default), scan.bounded.mode (unbounded, latest-offset),
// properties.isolation.level, scan.topic-partition-discovery.interval
// (Flink's duration syntax; '0' turns discovery off) and Weir's
// scan.bad-record.policy (fail, skip, dead-letter with
// scan.bad-record.dead-letter-topic). The topic and the deserializer are
// the caller's (a table reads the format its schema gives). Keys it does
// not know are ignored: the caller checks the key set. A bad value is an
// *OptionError naming the key.
func SourceOptionsFromMap(m map[string]string) ([]SourceOption, error) {
	opts := []SourceOption{}
	if b := m["properties.bootstrap.servers"]; b != "" {
		opts = append(opts, Brokers(strings.Split(b, ",")...))
	}
	if g := m["properties.group.id"]; g != "" {
		opts = append(opts, GroupID(g))
	}
	start, err := startingOffsets(m)
	if err != nil {
		return nil, err
	}
	if start != nil {
		opts = append(opts, StartingOffsets(start))
	}
	switch v := m["scan.bounded.mode"]; v {
	case "", "unbounded":
	case "latest-offset":
		opts = append(opts, Bounded())
	default:
		return nil, &OptionError{"scan.bounded.mode", v, "want unbounded or latest-offset"}
	}
	if strings.EqualFold(m["properties.isolation.level"], "read_uncommitted") {
		opts = append(opts, ReadUncommitted())
	}
	if v, ok := m["scan.topic-partition-discovery.interval"]; ok {
		d, err := duration.Parse(v) // Flink's duration syntax, not JDBC's
		if err != nil {
			return nil, &OptionError{"scan.topic-partition-discovery.interval", v,
				"want a duration such as '5 min' or '30 s', or '0' to turn discovery off"}
		}
		opts = append(opts, PartitionDiscoveryInterval(d))
	}
	p, err := sourceBadRecordPolicy(m)
	if err != nil {
		return nil, err
	}
	return append(opts, BadRecords(p)), nil
}

// startingOffsets reads scan.startup.mode; nil: the connector's default.
func startingOffsets(m map[string]string) (OffsetsInitializer, error) {
	switch v := m["scan.startup.mode"]; v {
	case "":
		return nil, nil
	case "group-offsets":
		return CommittedOffsets(Earliest()), nil
	case "earliest-offset":
		return Earliest(), nil
	case "latest-offset":
		return Latest(), nil
	case "timestamp":
		ms, err := strconv.ParseInt(m["scan.startup.timestamp-millis"], 10, 64)
		if err != nil {
			return nil, &OptionError{"scan.startup.mode", v, "needs 'scan.startup.timestamp-millis'"}
		}
		return Timestamp(time.UnixMilli(ms)), nil
	default:
		return nil, &OptionError{"scan.startup.mode", v, "want earliest-offset, latest-offset, group-offsets or timestamp"}
	}
}

// sourceBadRecordPolicy reads scan.bad-record.policy (default fail).
func sourceBadRecordPolicy(m map[string]string) (BadRecordPolicy, error) {
	switch v := m["scan.bad-record.policy"]; v {
	case "", "fail":
		return FailOnBadRecord(), nil
	case "skip":
		return SkipBadRecords(), nil
	case "dead-letter":
		topic := m["scan.bad-record.dead-letter-topic"]
		if topic == "" {
			return BadRecordPolicy{}, &OptionError{"scan.bad-record.policy", v, "needs 'scan.bad-record.dead-letter-topic'"}
		}
		return DeadLetter(topic), nil
	default:
		return BadRecordPolicy{}, &OptionError{"scan.bad-record.policy", v, "want fail, skip or dead-letter"}
	}
}

// SinkOptionsFromMap reads the sink options of a Flink SQL kafka table's
// WITH clause, by Flink's names: properties.bootstrap.servers, topic,
// sink.delivery-guarantee (default at-least-once),
// sink.transactional-id-prefix, properties.transaction.timeout.ms,
// properties.max.request.size, properties.compression.type (default
// none), and Weir's sink.allow-replay and
// sink.bad-record.policy (fail, skip). Records get no event-time timestamp
// (RecordTimestamps(false)), as Flink SQL's sink writes one only from a
// 'timestamp' metadata column. The serializer is the caller's. Keys it
// does not know are ignored; a bad value is an *OptionError naming the key.
func SinkOptionsFromMap(m map[string]string) ([]SinkOption, error) {
	g := delivery.AtLeastOnce // Flink's default
	if v := m["sink.delivery-guarantee"]; v != "" {
		var err error
		if g, err = parseGuarantee(v); err != nil {
			return nil, err
		}
	}
	opts := []SinkOption{Topic(m["topic"]), Guarantee(g), RecordTimestamps(false)}
	if b := m["properties.bootstrap.servers"]; b != "" {
		opts = append(opts, Brokers(strings.Split(b, ",")...))
	}
	if p := m["sink.transactional-id-prefix"]; p != "" {
		opts = append(opts, TransactionalIDPrefix(p))
	}
	if v, ok := m["properties.compression.type"]; ok {
		if _, known := compressionCodecs[v]; !known || v == "" {
			return nil, &OptionError{"properties.compression.type", v, "want " + compressionNames}
		}
		opts = append(opts, Compression(v))
	}
	more, err := sinkNumbersFromMap(m)
	if err != nil {
		return nil, err
	}
	return append(opts, more...), nil
}

// sinkNumbersFromMap reads the sink's options other than strings.
func sinkNumbersFromMap(m map[string]string) ([]SinkOption, error) {
	var opts []SinkOption
	if v := m["sink.allow-replay"]; v != "" {
		allow, err := strconv.ParseBool(v)
		if err != nil {
			return nil, &OptionError{"sink.allow-replay", v, "want true or false"}
		}
		if allow {
			opts = append(opts, AllowReplay())
		}
	}
	if v := m["properties.transaction.timeout.ms"]; v != "" {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, &OptionError{"properties.transaction.timeout.ms", v, "is not a number of ms"}
		}
		opts = append(opts, TransactionTimeout(time.Duration(ms)*time.Millisecond))
	}
	if v := m["properties.max.request.size"]; v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return nil, &OptionError{"properties.max.request.size", v, "is not a number"}
		}
		opts = append(opts, MaxRequestSize(n))
	}
	switch v := m["sink.bad-record.policy"]; v {
	case "", "fail":
		return append(opts, BadRecords(FailOnBadRecord())), nil
	case "skip":
		return append(opts, BadRecords(SkipBadRecords())), nil
	default:
		return nil, &OptionError{"sink.bad-record.policy", v, "want fail or skip"}
	}
}
