package nexmark

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ErrConfig is wrapped by every configuration error.
var ErrConfig = errors.New("nexmark: invalid configuration")

// DefaultBaseTime is the event time of the stream's start when
// Config.BaseTime is 0: 2024-01-01T00:00:00Z. Flink Nexmark uses the wall
// clock at job start; a fixed default keeps streams repeatable.
const DefaultBaseTime int64 = 1704067200000

// Config configures the generator. A zero field takes the default given in
// its comment (Flink Nexmark's); the option name that sets it in
// FromOptions is in quotes.
type Config struct {
	// EventsNum is the number of events ("events.num"). 0, the default,
	// means unbounded, as in Flink.
	EventsNum int64
	// FirstEventRate is the event rate, events per second of event time
	// over all splits ("first-event.rate", also "tps" and "rate"). It sets
	// the timestamps; the source emits that fast only when RateLimited.
	// Default 10,000.
	FirstEventRate int
	// NextEventRate ("next-event.rate") is accepted for Flink's DDL and must
	// equal FirstEventRate: like Flink's generator, this one has no rate
	// shapes. Default FirstEventRate.
	NextEventRate int
	// PersonProportion, AuctionProportion and BidProportion
	// ("person.proportion", "auction.proportion", "bid.proportion") are the
	// shares of each event type. Defaults 1, 3 and 46.
	PersonProportion, AuctionProportion, BidProportion int
	// AvgPersonSize, AvgAuctionSize and AvgBidSize ("person.avg-size",
	// "auction.avg-size", "bid.avg-size"; bytes, "200b" or "1kb" accepted)
	// set the length of the extra fields. Defaults 200, 500 and 100.
	AvgPersonSize, AvgAuctionSize, AvgBidSize int
	// HotAuctionRatio ("bid.hot-ratio.auctions", default 2): a bid goes to
	// the hot auction with probability 1 − 1/HotAuctionRatio.
	HotAuctionRatio int
	// HotBiddersRatio ("bid.hot-ratio.bidders", default 4): a bid comes from
	// the hot bidder with probability 1 − 1/HotBiddersRatio.
	HotBiddersRatio int
	// HotSellersRatio ("auction.hot-ratio.sellers", default 4): an auction
	// belongs to the hot seller with probability 1 − 1/HotSellersRatio.
	HotSellersRatio int
	// NumInFlightAuctions ("num-in-flight-auctions", a Weir name; default
	// 100) bounds the auctions a random bid may name and sets auction length.
	NumInFlightAuctions int
	// NumActivePeople ("num-active-people", a Weir name; default 1000)
	// bounds the people a random seller or bidder may be.
	NumActivePeople int
	// Splits is the number of generator splits ("splits", a Weir name;
	// default 8, as in the published runs). It changes the data, not only
	// the parallelism: every split has its own id range and hot keys.
	Splits int
	// BaseTime is the event time (ms since the epoch) of the stream's start
	// ("base-time", a Weir name: ms or RFC 3339). Default DefaultBaseTime.
	BaseTime int64
	// RateLimited makes the source emit each event no earlier than its
	// event time, taking the first read as the start: FirstEventRate events
	// per second in all ("rate.limited" = true or "max-emit-speed" = false).
	// Default false: as fast as possible.
	RateLimited bool
}

// EnsureDefaults sets every zero field to its default.
func (c *Config) EnsureDefaults() {
	setDefault := func(p *int, v int) {
		if *p == 0 {
			*p = v
		}
	}
	setDefault(&c.FirstEventRate, 10000)
	setDefault(&c.NextEventRate, c.FirstEventRate)
	setDefault(&c.PersonProportion, 1)
	setDefault(&c.AuctionProportion, 3)
	setDefault(&c.BidProportion, 46)
	setDefault(&c.AvgPersonSize, 200)
	setDefault(&c.AvgAuctionSize, 500)
	setDefault(&c.AvgBidSize, 100)
	setDefault(&c.HotAuctionRatio, 2)
	setDefault(&c.HotBiddersRatio, 4)
	setDefault(&c.HotSellersRatio, 4)
	setDefault(&c.NumInFlightAuctions, 100)
	setDefault(&c.NumActivePeople, 1000)
	setDefault(&c.Splits, 8)
	if c.BaseTime == 0 {
		c.BaseTime = DefaultBaseTime
	}
}

// Validate reports the first field out of range (after EnsureDefaults).
func (c *Config) Validate() error {
	bad := func(what string, v any, want string) error {
		return fmt.Errorf("%w: %s = %v, want %s", ErrConfig, what, v, want)
	}
	switch {
	case c.EventsNum < 0:
		return bad("events.num", c.EventsNum, "0 (unbounded) or more")
	case c.FirstEventRate < 0:
		return bad("first-event.rate", c.FirstEventRate, "a positive rate")
	case c.NextEventRate != c.FirstEventRate:
		return bad("next-event.rate", c.NextEventRate, "first-event.rate: rate shapes are not supported")
	case c.PersonProportion < 0 || c.AuctionProportion < 0 || c.BidProportion < 0:
		return bad("proportions", []int{c.PersonProportion, c.AuctionProportion, c.BidProportion}, "positive values")
	case c.Splits < 1 || c.Splits > 1024:
		return bad("splits", c.Splits, "1 to 1024")
	case c.EventsNum > 0 && c.EventsNum < int64(c.Splits):
		return bad("events.num", c.EventsNum, fmt.Sprintf("at least splits (%d)", c.Splits))
	}
	for _, s := range []struct {
		name string
		v    int
	}{{"person.avg-size", c.AvgPersonSize}, {"auction.avg-size", c.AvgAuctionSize}, {"bid.avg-size", c.AvgBidSize}} {
		if s.v < 0 || s.v > textLen/2 {
			return bad(s.name, s.v, "1 byte to 512kb")
		}
	}
	for _, r := range []struct {
		name string
		v    int
	}{{"bid.hot-ratio.auctions", c.HotAuctionRatio}, {"bid.hot-ratio.bidders", c.HotBiddersRatio},
		{"auction.hot-ratio.sellers", c.HotSellersRatio}, {"num-in-flight-auctions", c.NumInFlightAuctions},
		{"num-active-people", c.NumActivePeople}} {
		if r.v < 0 {
			return bad(r.name, r.v, "a positive value")
		}
	}
	return nil
}

// optionSetters maps each accepted option name to what it sets.
var optionSetters = map[string]func(c *Config, v string) error{
	"events.num":                func(c *Config, v string) error { return parseInt64(v, &c.EventsNum) },
	"first-event.rate":          func(c *Config, v string) error { return parseInt(v, &c.FirstEventRate) },
	"tps":                       func(c *Config, v string) error { return parseInt(v, &c.FirstEventRate) },
	"rate":                      func(c *Config, v string) error { return parseInt(v, &c.FirstEventRate) },
	"next-event.rate":           func(c *Config, v string) error { return parseInt(v, &c.NextEventRate) },
	"person.proportion":         func(c *Config, v string) error { return parseInt(v, &c.PersonProportion) },
	"auction.proportion":        func(c *Config, v string) error { return parseInt(v, &c.AuctionProportion) },
	"bid.proportion":            func(c *Config, v string) error { return parseInt(v, &c.BidProportion) },
	"person.avg-size":           func(c *Config, v string) error { return parseSize(v, &c.AvgPersonSize) },
	"auction.avg-size":          func(c *Config, v string) error { return parseSize(v, &c.AvgAuctionSize) },
	"bid.avg-size":              func(c *Config, v string) error { return parseSize(v, &c.AvgBidSize) },
	"bid.hot-ratio.auctions":    func(c *Config, v string) error { return parseInt(v, &c.HotAuctionRatio) },
	"bid.hot-ratio.bidders":     func(c *Config, v string) error { return parseInt(v, &c.HotBiddersRatio) },
	"auction.hot-ratio.sellers": func(c *Config, v string) error { return parseInt(v, &c.HotSellersRatio) },
	"num-in-flight-auctions":    func(c *Config, v string) error { return parseInt(v, &c.NumInFlightAuctions) },
	"num-active-people":         func(c *Config, v string) error { return parseInt(v, &c.NumActivePeople) },
	"splits":                    func(c *Config, v string) error { return parseInt(v, &c.Splits) },
	"base-time":                 parseBaseTime,
	"rate.limited": func(c *Config, v string) error {
		b, err := strconv.ParseBool(v)
		c.RateLimited = c.RateLimited || b
		return err
	},
	"max-emit-speed": func(c *Config, v string) error {
		b, err := strconv.ParseBool(v)
		c.RateLimited = c.RateLimited || !b
		return err
	},
	// Accepted so that Flink's DDL runs unchanged; like Flink's generator,
	// this one does not use them.
	"connector":   func(c *Config, v string) error { return nil },
	"rate.shape":  func(c *Config, v string) error { return nil },
	"rate.period": func(c *Config, v string) error { return nil },
}

// ParseOptions reads a Config from the WITH options of a
// `'connector' = 'nexmark'` table, Flink Nexmark's names. Unknown options
// are an error naming them, as in Flink.
func ParseOptions(opts map[string]string) (Config, error) {
	var c Config
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	slices.Sort(keys) // report errors deterministically
	for _, k := range keys {
		set, ok := optionSetters[k]
		if !ok {
			return Config{}, fmt.Errorf("%w: unsupported option %q (supported: %s)", ErrConfig, k, supportedOptions())
		}
		if err := set(&c, strings.TrimSpace(opts[k])); err != nil {
			return Config{}, fmt.Errorf("%w: option %q = %q: %v", ErrConfig, k, opts[k], err)
		}
	}
	if v, ok := opts["connector"]; ok && v != "nexmark" {
		return Config{}, fmt.Errorf("%w: connector %q is not nexmark", ErrConfig, v)
	}
	c.EnsureDefaults()
	return c, c.Validate()
}

func supportedOptions() string { return strings.Join(OptionNames(), ", ") }

// OptionNames returns the names of every option ParseOptions accepts,
// sorted (the SQL planner checks a table's WITH options against them).
func OptionNames() []string {
	names := make([]string, 0, len(optionSetters))
	for k := range optionSetters {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

func parseInt64(v string, p *int64) error {
	n, err := strconv.ParseInt(v, 10, 64)
	*p = n
	return err
}

func parseInt(v string, p *int) error {
	n, err := strconv.ParseInt(v, 10, 32)
	*p = int(n)
	return err
}

// parseSize reads a Flink MemorySize: a number of bytes with an optional
// unit b, k/kb, m/mb (powers of 1024).
func parseSize(v string, p *int) error {
	s := strings.ToLower(strings.TrimSpace(v))
	mult := 1
	for _, u := range []struct {
		suffix string
		mult   int
	}{{"kb", 1 << 10}, {"mb", 1 << 20}, {"k", 1 << 10}, {"m", 1 << 20}, {"bytes", 1}, {"b", 1}} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.Atoi(s)
	*p = n * mult
	return err
}

func parseBaseTime(c *Config, v string) error {
	if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
		c.BaseTime = ms
		return nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return errors.New("want ms since the epoch or an RFC 3339 time")
	}
	c.BaseTime = t.UnixMilli()
	return nil
}
