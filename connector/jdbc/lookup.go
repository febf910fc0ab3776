package jdbc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/weirstream/weir/duration"
	"github.com/weirstream/weir/types"
)

// Flink's lookup option names of the JDBC connector.
const (
	KeyLookupCache                 = "lookup.cache"
	KeyLookupMaxRows               = "lookup.partial-cache.max-rows"
	KeyLookupExpireAfterWrite      = "lookup.partial-cache.expire-after-write"
	KeyLookupExpireAfterAccess     = "lookup.partial-cache.expire-after-access"
	KeyLookupCacheMissingKey       = "lookup.partial-cache.cache-missing-key"
	KeyLookupLegacyMaxRows         = "lookup.cache.max-rows"
	KeyLookupLegacyTTL             = "lookup.cache.ttl"
	KeyLookupLegacyCacheMissingKey = "lookup.cache.caching-missing-key"
	KeyLookupMaxRetries            = "lookup.max-retries"
	defaultLookupLegacyTTL         = 10 * time.Second
	DefaultLookupMaxRetries        = 3
)

// LookupKeys are the lookup options of the JDBC connector, which a table
// that is also a sink accepts without effect.
var LookupKeys = []string{KeyLookupCache, KeyLookupMaxRows, KeyLookupExpireAfterWrite, KeyLookupExpireAfterAccess,
	KeyLookupCacheMissingKey, KeyLookupLegacyMaxRows, KeyLookupLegacyTTL, KeyLookupLegacyCacheMissingKey, KeyLookupMaxRetries}

// LookupOptions configures a Lookup: a table read by key for a lookup join
// (Flink's JdbcRowDataLookupFunction).
type LookupOptions struct {
	// URL, Table, Username and Password are as in Options. URL and Table
	// are required.
	URL, Table, Username, Password string
	// Columns are the columns each row returns, in order, and Types their
	// SQL types (what the driver returns is converted to them). Required.
	Columns []string
	Types   []types.Type
	// Keys index Columns: the columns a lookup compares with its key, in
	// the key's order (WHERE k1 = ? AND k2 = ?). Required.
	Keys []int
	// Cache, when set, is the PARTIAL cache (lookup.cache = PARTIAL, or
	// the legacy lookup.cache.max-rows with lookup.cache.ttl). Default nil:
	// NONE, every lookup queries the table.
	Cache *CacheOptions
	// MaxRetries is lookup.max-retries: retries of a query that failed
	// with a transient error (lost connection, deadlock, lock timeout), on
	// a fresh session. Default DefaultLookupMaxRetries.
	MaxRetries int
	// Now is the clock of the cache. Default time.Now.
	Now func() time.Time
	// Logger receives retry messages. Default slog.Default().
	Logger *slog.Logger
}

// ParseLookupOptions reads the lookup options (and the connection's:
// url, table-name, username, password) from a WITH clause. Other keys of
// the connector are left to ParseOptions. Columns, Types and Keys are the
// caller's to fill. A bad value is an error that names its option.
func ParseLookupOptions(m map[string]string) (LookupOptions, error) {
	o := LookupOptions{URL: m[KeyURL], Table: m[KeyTable], Username: m[KeyUsername], Password: m[KeyPassword],
		MaxRetries: DefaultLookupMaxRetries}
	p := optionReader{m: m}
	o.MaxRetries = p.nonNegative(KeyLookupMaxRetries, DefaultLookupMaxRetries)
	partial := CacheOptions{
		MaxRows:           p.nonNegative(KeyLookupMaxRows, 0),
		ExpireAfterWrite:  p.duration(KeyLookupExpireAfterWrite),
		ExpireAfterAccess: p.duration(KeyLookupExpireAfterAccess),
		CacheMissingKey:   p.boolean(KeyLookupCacheMissingKey, true),
	}
	legacy := CacheOptions{MaxRows: p.nonNegative(KeyLookupLegacyMaxRows, 0), ExpireAfterWrite: defaultLookupLegacyTTL,
		CacheMissingKey: p.boolean(KeyLookupLegacyCacheMissingKey, true)}
	if _, ok := m[KeyLookupLegacyTTL]; ok {
		legacy.ExpireAfterWrite = p.duration(KeyLookupLegacyTTL)
	}
	if legacy.MaxRows > 0 && legacy.ExpireAfterWrite > 0 { // Flink's legacy cache
		o.Cache = &legacy
	}
	switch mode := strings.ToUpper(strings.TrimSpace(m[KeyLookupCache])); mode {
	case "", "NONE":
	case "PARTIAL": // takes precedence over the legacy options, as in Flink
		if p.err == nil && partial.MaxRows == 0 && partial.ExpireAfterWrite == 0 && partial.ExpireAfterAccess == 0 {
			p.fail(KeyLookupCache, "PARTIAL needs at least one of '%s', '%s' and '%s'",
				KeyLookupMaxRows, KeyLookupExpireAfterWrite, KeyLookupExpireAfterAccess)
		}
		o.Cache = &partial
	default:
		p.fail(KeyLookupCache, "%q is not a lookup cache; want NONE or PARTIAL (FULL is not supported yet)", m[KeyLookupCache])
	}
	if p.err != nil {
		return o, fmt.Errorf("jdbc: %w", p.err)
	}
	return o, nil
}

// optionReader reads typed option values, keeping the first error (in
// key order, so the message is the same every time).
type optionReader struct {
	m      map[string]string
	err    error
	errKey string
}

func (p *optionReader) fail(k, format string, args ...any) {
	if p.err == nil || k < p.errKey {
		p.err, p.errKey = fmt.Errorf("option '%s': "+format, append([]any{k}, args...)...), k
	}
}

func (p *optionReader) nonNegative(k string, def int) int {
	v, ok := p.m[k]
	if !ok {
		return def
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		p.fail(k, "%q is not a whole number ≥ 0", v)
		return def
	}
	return n
}

func (p *optionReader) duration(k string) time.Duration {
	v, ok := p.m[k]
	if !ok {
		return 0
	}
	d, err := duration.Parse(strings.TrimSpace(v))
	if err != nil || d < 0 {
		p.fail(k, "%q is not a duration (e.g. '10 s', '5 min')", v)
		return 0
	}
	return d
}

func (p *optionReader) boolean(k string, def bool) bool {
	v, ok := p.m[k]
	if !ok {
		return def
	}
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	if err != nil {
		p.fail(k, "%q is not true or false", v)
		return def
	}
	return b
}

// Lookup is a table read by key: Open gives each lookup-join subtask its
// own LookupFunction (connections and cache).
type Lookup struct {
	opts   LookupOptions
	target target
	query  string
}

// NewLookup checks o and prepares the query.
func NewLookup(o LookupOptions) (*Lookup, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	switch {
	case o.URL == "" || o.Table == "":
		return nil, errors.New("jdbc: a lookup needs 'url' and 'table-name'")
	case len(o.Columns) == 0 || len(o.Columns) != len(o.Types):
		return nil, errors.New("jdbc: a lookup needs Columns and as many Types")
	case len(o.Keys) == 0:
		return nil, errors.New("jdbc: a lookup needs Keys")
	}
	tg, err := parseTarget(o.URL, o.Username, o.Password)
	if err != nil {
		return nil, fmt.Errorf("jdbc: %w", err)
	}
	l := &Lookup{opts: o, target: tg}
	l.query, err = l.selectSQL()
	return l, err
}

// selectSQL is SELECT cols FROM table WHERE k1 = ? AND ….
func (l *Lookup) selectSQL() (string, error) {
	d := l.target.dialect
	cols := make([]string, len(l.opts.Columns))
	for i, c := range l.opts.Columns {
		cols[i] = d.quoteIdent(c)
	}
	conds := make([]string, len(l.opts.Keys))
	for i, k := range l.opts.Keys {
		if k < 0 || k >= len(cols) {
			return "", fmt.Errorf("jdbc: lookup key %d is not a column", k)
		}
		conds[i] = cols[k] + " = " + d.placeholder(i+1)
	}
	return "SELECT " + strings.Join(cols, ", ") + " FROM " + quoteQualified(l.opts.Table, d.quoteIdent) +
		" WHERE " + strings.Join(conds, " AND "), nil
}

// Query is the statement each lookup runs.
func (l *Lookup) Query() string { return l.query }

// Open returns a LookupFunction for one subtask.
func (l *Lookup) Open() (*LookupFunction, error) {
	p, err := l.target.dialect.open(l.target)
	if err != nil {
		return nil, fmt.Errorf("jdbc: table %q: %w", l.opts.Table, err)
	}
	f := &LookupFunction{l: l, pool: p}
	if l.opts.Cache != nil {
		f.cache = newLookupCache(*l.opts.Cache)
	}
	return f, nil
}

// LookupFunction looks up one subtask's keys: through its cache, if any,
// else by a query on its session. Not safe for concurrent use (the
// subtask's goroutine calls it).
type LookupFunction struct {
	l       *Lookup
	pool    pool
	sess    session
	cache   *lookupCache
	queries int
}

// Lookup returns the rows whose key columns equal key.
func (f *LookupFunction) Lookup(ctx context.Context, key []any) ([][]any, error) {
	var ck string
	if f.cache != nil {
		ck = cacheKey(key)
		if rows, ok := f.cache.get(ck, f.l.opts.Now()); ok {
			return rows, nil
		}
	}
	var rows [][]any
	d, o := f.l.target.dialect, f.l.opts
	err := retry(ctx, d, o.MaxRetries, "lookup", o.Logger.Warn, func() error {
		var err error
		rows, err = f.query(ctx, key)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("jdbc: table %q: %w", o.Table, err)
	}
	if f.cache != nil {
		f.cache.put(ck, rows, f.l.opts.Now())
	}
	return rows, nil
}

// query runs the lookup once, on the pinned session (a fresh one after a
// failure).
func (f *LookupFunction) query(ctx context.Context, key []any) ([][]any, error) {
	if f.sess == nil {
		s, err := f.pool.acquire(ctx)
		if err != nil {
			return nil, err
		}
		f.sess = s
	}
	f.queries++
	vals, err := f.sess.queryValues(ctx, f.l.query, key...)
	if err != nil {
		f.sess.release(true)
		f.sess = nil
		return nil, err
	}
	return f.l.convert(vals)
}

// convert turns driver values into values of the columns' types.
func (l *Lookup) convert(vals [][]any) ([][]any, error) {
	out := make([][]any, len(vals))
	for i, r := range vals {
		out[i] = make([]any, len(r))
		for j, v := range r {
			var err error
			if out[i][j], err = lookupValue(v, l.opts.Types[j]); err != nil {
				return nil, fmt.Errorf("column %q: %w", l.opts.Columns[j], err)
			}
		}
	}
	return out, nil
}

// Queries is the number of queries the function ran (for tests and
// metrics: lookups that the cache answered ran none).
func (f *LookupFunction) Queries() int { return f.queries }

// Close releases the session and the pool; the cache goes with f.
func (f *LookupFunction) Close() error {
	if f.sess != nil {
		f.sess.release(false)
		f.sess = nil
	}
	return f.pool.close()
}

// cacheKey encodes a key's values with their types, so 1 and "1" differ.
func cacheKey(key []any) string {
	var b strings.Builder
	for _, v := range key {
		fmt.Fprintf(&b, "%T\x1f%v\x1e", v, v)
	}
	return b.String()
}
