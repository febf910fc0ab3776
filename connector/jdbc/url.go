package jdbc

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
)

// target is a parsed `url`: which database and how to connect to it.
type target struct {
	dialect dialect
	mysql   *mysql.Config   // set for MySQL/MariaDB
	pg      *pgx.ConnConfig // set for PostgreSQL
}

// address is the host:port (or socket) the target connects to.
func (t target) address() string {
	if t.mysql != nil {
		return t.mysql.Addr
	}
	if t.pg != nil {
		return net.JoinHostPort(t.pg.Host, strconv.Itoa(int(t.pg.Port)))
	}
	return "?"
}

// parseTarget reads a JDBC URL or a Go DSN. user and password, when set,
// override the URL's.
func parseTarget(raw, user, password string) (target, error) {
	s := strings.TrimSpace(raw)
	lower := strings.ToLower(s)
	switch {
	case strings.HasPrefix(lower, "jdbc:mysql:"), strings.HasPrefix(lower, "jdbc:mariadb:"):
		dsn, err := mysqlDSNFromJDBC(s[len("jdbc:")+strings.Index(s[len("jdbc:"):], ":")+1:])
		if err != nil {
			return target{}, err
		}
		return mysqlTarget(dsn, user, password)
	case strings.HasPrefix(lower, "jdbc:postgresql:"):
		dsn, err := pgDSNFromJDBC(s[len("jdbc:postgresql:"):])
		if err != nil {
			return target{}, err
		}
		return pgTarget(dsn, user, password)
	case strings.HasPrefix(lower, "jdbc:"):
		return target{}, fmt.Errorf("url %q: only jdbc:mysql, jdbc:mariadb and jdbc:postgresql are supported", redact(s))
	case strings.HasPrefix(lower, "postgres://"), strings.HasPrefix(lower, "postgresql://"),
		strings.Contains(lower, "host=") || strings.Contains(lower, "dbname="):
		return pgTarget(s, user, password)
	}
	return mysqlTarget(s, user, password)
}

func mysqlTarget(dsn, user, password string) (target, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return target{}, fmt.Errorf("url %q is neither a JDBC URL nor a valid Go DSN: %w", redact(dsn), err)
	}
	if user != "" {
		cfg.User = user
	}
	if password != "" {
		cfg.Passwd = password
	}
	// One round trip per batch instead of prepare+execute+close; safe with
	// the utf8mb4 character set the driver negotiates.
	if !strings.Contains(dsn, "interpolateParams=") {
		cfg.InterpolateParams = true
	}
	return target{dialect: mysqlDialect{}, mysql: cfg}, nil
}

func pgTarget(dsn, user, password string) (target, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return target{}, fmt.Errorf("url %q is not a valid PostgreSQL connection string: %w", redact(dsn), err)
	}
	if user != "" {
		cfg.User = user
	}
	if password != "" {
		cfg.Password = password
	}
	return target{dialect: pgDialect{}, pg: cfg}, nil
}

// jdbcURL splits "//host:port/db?k=v" (after the "jdbc:mysql:" prefix).
func jdbcURL(rest string) (*url.URL, error) {
	if !strings.HasPrefix(rest, "//") {
		rest = "//localhost/" + rest // jdbc:postgresql:db
	}
	u, err := url.Parse("x:" + rest)
	if err != nil {
		return nil, fmt.Errorf("url: %w", err)
	}
	return u, nil
}

// mysqlDSNFromJDBC turns //host:3306/db?user=…&useSSL=false into a
// go-sql-driver DSN. Connector/J properties without a Go meaning (useUnicode,
// rewriteBatchedStatements, …) are dropped; others pass through as driver
// parameters.
func mysqlDSNFromJDBC(rest string) (string, error) {
	u, err := jdbcURL(rest)
	if err != nil {
		return "", err
	}
	cfg := mysql.NewConfig()
	cfg.Net, cfg.Addr, cfg.DBName = "tcp", u.Host, strings.TrimPrefix(u.Path, "/")
	if u.Port() == "" {
		cfg.Addr = u.Hostname() + ":3306"
	}
	if u.User != nil {
		cfg.User = u.User.Username()
		cfg.Passwd, _ = u.User.Password()
	}
	extra := url.Values{}
	for k, vs := range u.Query() {
		if err := mysqlJDBCParam(cfg, extra, k, vs[len(vs)-1]); err != nil {
			return "", fmt.Errorf("url parameter %s: %w", k, err)
		}
	}
	dsn := cfg.FormatDSN()
	if len(extra) > 0 {
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		dsn += sep + extra.Encode()
	}
	return dsn, nil
}

var connectorJIgnored = map[string]bool{"useunicode": true, "characterencoding": true, "rewritebatchedstatements": true,
	"autoreconnect": true, "zerodatetimebehavior": true, "useserverprepstmts": true, "cacheprepstmts": true,
	"prepstmtcachesize": true, "prepstmtcachesqllimit": true, "allowpublickeyretrieval": true,
	"verifyservercertificate": true, "usecursorfetch": true, "uselegacydatetimecode": true, "pinglobaltxtophysicalconnection": true}

func mysqlJDBCParam(cfg *mysql.Config, extra url.Values, k, v string) error {
	var err error
	switch lk := strings.ToLower(k); {
	case lk == "user":
		cfg.User = v
	case lk == "password":
		cfg.Passwd = v
	case lk == "usessl":
		cfg.TLSConfig = map[bool]string{true: "preferred", false: "false"}[v == "true"]
	case lk == "sslmode":
		cfg.TLSConfig = map[string]string{"disabled": "false", "preferred": "preferred", "required": "skip-verify",
			"verify_ca": "true", "verify_identity": "true"}[strings.ToLower(v)]
	case lk == "connecttimeout":
		cfg.Timeout, err = millis(v)
	case lk == "sockettimeout":
		cfg.ReadTimeout, err = millis(v)
		cfg.WriteTimeout = cfg.ReadTimeout
	case lk == "servertimezone":
		cfg.Loc, err = time.LoadLocation(v)
	case connectorJIgnored[lk]:
	default:
		extra.Set(k, v)
	}
	return err
}

func millis(v string) (time.Duration, error) {
	n, err := strconv.Atoi(v)
	return time.Duration(n) * time.Millisecond, err
}

// pgDSNFromJDBC turns //host:5432/db?user=…&ssl=true into a libpq URL.
// PgJDBC properties without a libpq meaning are dropped.
func pgDSNFromJDBC(rest string) (string, error) {
	u, err := jdbcURL(rest)
	if err != nil {
		return "", err
	}
	q := url.Values{}
	for k, vs := range u.Query() {
		v := vs[len(vs)-1]
		switch strings.ToLower(k) {
		case "user":
			u.User = url.UserPassword(v, passwordOf(u.User))
		case "password":
			u.User = url.UserPassword(usernameOf(u.User), v)
		case "ssl":
			if v == "true" {
				q.Set("sslmode", "require")
			}
		case "sslmode":
			q.Set("sslmode", v)
		case "currentschema":
			q.Set("search_path", v)
		case "applicationname":
			q.Set("application_name", v)
		case "connecttimeout":
			q.Set("connect_timeout", v)
		case "sockettimeout", "logintimeout", "tcpkeepalive", "rewritebatchedinserts", "preparethreshold",
			"stringtype", "binarytransfer", "reconnect":
		default:
			q.Set(k, v)
		}
	}
	out := url.URL{Scheme: "postgres", User: u.User, Host: u.Host, Path: u.Path, RawQuery: q.Encode()}
	return out.String(), nil
}

func usernameOf(u *url.Userinfo) string {
	if u == nil {
		return ""
	}
	return u.Username()
}

func passwordOf(u *url.Userinfo) string {
	if u == nil {
		return ""
	}
	p, _ := u.Password()
	return p
}

// redact hides a password in a URL or DSN for error messages.
func redact(s string) string {
	if i := strings.Index(s, "password="); i >= 0 {
		j := strings.IndexAny(s[i:], "& ")
		if j < 0 {
			return s[:i] + "password=xxx"
		}
		return s[:i] + "password=xxx" + s[i+j:]
	}
	at := strings.LastIndex(s, "@")
	if at < 0 {
		return s
	}
	head := s[:at]
	start := strings.LastIndex(head, "//") + 2
	if start < 2 {
		start = 0
	}
	if c := strings.Index(head[start:], ":"); c >= 0 {
		return head[:start+c+1] + "xxx" + s[at:]
	}
	return s
}
