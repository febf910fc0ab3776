package weir.debezium;

import io.debezium.embedded.Connect;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import io.debezium.engine.format.ChangeEventFormat;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.source.SourceRecord;

/**
 * Records the change events a real Debezium writes for a scripted billing
 * workload on a table of its own, as Kafka Connect would put them on a topic.
 *
 * <p>The Debezium embedded engine runs the PostgreSQL connector (pgoutput) or
 * the MySQL connector; each SourceRecord goes through Kafka Connect's
 * JsonConverter twice, with schemas.enable=true and false (what Flink's
 * 'debezium-json.schema-include' reads), exactly as a Connect worker
 * converts a record before producing it. A tombstone (null value) is written
 * as the line {@code null}. After the last event the table's final rows are
 * dumped so the expected totals never come from decoding the events.
 *
 * <p>Usage: Record postgres|mysql JDBC_URL USER PASSWORD DATABASE TABLE OUT_DIR
 */
public final class Record {
  private static final int SEED_ROWS = 20;
  private static final int STEPS = 260;
  private static final String[] ACCOUNTS = {"acct-a", "acct-b", "acct-c", "acct-d", "acct-e"};

  public static void main(String[] args) throws Exception {
    if (args.length != 7) {
      System.err.println("usage: Record postgres|mysql JDBC_URL USER PASSWORD DATABASE TABLE OUT_DIR");
      System.exit(2);
    }
    Source src = new Source(args[0], args[1], args[2], args[3], args[4], args[5]);
    Path out = Path.of(args[6]);
    Files.createDirectories(out);
    src.create();
    try {
      capture(src, out);
    } finally {
      src.drop();
    }
  }

  /** The database under capture: its dialect, JDBC coordinates and table. */
  record Source(String kind, String url, String user, String password, String database, String table) {
    boolean postgres() {
      return kind.equals("postgres");
    }

    Connection connect() throws SQLException {
      return DriverManager.getConnection(url, user, password);
    }

    String slot() {
      return table + "_slot";
    }

    String publication() {
      return table + "_pub";
    }

    void create() throws SQLException {
      try (Connection c = connect(); Statement s = c.createStatement()) {
        s.execute("DROP TABLE IF EXISTS " + table);
        s.execute("CREATE TABLE " + table + " (id INT PRIMARY KEY, account VARCHAR(32) NOT NULL, "
            + "amount DECIMAL(12,2) NOT NULL, note VARCHAR(64))");
        if (postgres()) {
          s.execute("ALTER TABLE " + table + " REPLICA IDENTITY FULL");
          s.execute("DROP PUBLICATION IF EXISTS " + publication());
          s.execute("CREATE PUBLICATION " + publication() + " FOR TABLE " + table);
        }
      }
    }

    void drop() throws SQLException {
      try (Connection c = connect(); Statement s = c.createStatement()) {
        if (postgres()) {
          s.execute("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '"
              + slot() + "'");
          s.execute("DROP PUBLICATION IF EXISTS " + publication());
        }
        s.execute("DROP TABLE IF EXISTS " + table);
      }
    }

    Properties engineProps(Path offsets, Path history) {
      Properties p = new Properties();
      p.setProperty("name", "weir-debezium-recorder-" + table);
      p.setProperty("offset.storage", "org.apache.kafka.connect.storage.FileOffsetBackingStore");
      p.setProperty("offset.storage.file.filename", offsets.toString());
      p.setProperty("offset.flush.interval.ms", "1000");
      p.setProperty("topic.prefix", "weir");
      p.setProperty("snapshot.mode", "initial");
      // Flink's JSON formats read a DECIMAL from a JSON number or string; the
      // default 'precise' writes Connect's Decimal as base64 bytes, which
      // Flink's debezium-json does not read. Flink's docs pair it with 'string'.
      p.setProperty("decimal.handling.mode", "string");
      String[] hostPort = hostPort();
      p.setProperty("database.hostname", hostPort[0]);
      p.setProperty("database.port", hostPort[1]);
      p.setProperty("database.user", user);
      p.setProperty("database.password", password);
      if (postgres()) {
        p.setProperty("connector.class", "io.debezium.connector.postgresql.PostgresConnector");
        p.setProperty("plugin.name", "pgoutput");
        p.setProperty("slot.name", slot());
        p.setProperty("publication.name", publication());
        p.setProperty("publication.autocreate.mode", "disabled");
        p.setProperty("database.dbname", database);
        p.setProperty("table.include.list", "public." + table);
      } else {
        p.setProperty("connector.class", "io.debezium.connector.mysql.MySqlConnector");
        p.setProperty("database.server.id", String.valueOf(5400 + Math.abs(table.hashCode() % 1000)));
        p.setProperty("database.include.list", database);
        p.setProperty("table.include.list", database + "." + table);
        p.setProperty("schema.history.internal", "io.debezium.storage.file.history.FileSchemaHistory");
        p.setProperty("schema.history.internal.file.filename", history.toString());
        p.setProperty("snapshot.locking.mode", "none");
      }
      return p;
    }

    /** The host and port of a jdbc:postgresql://h:p/db or jdbc:mysql://h:p/db URL. */
    String[] hostPort() {
      String rest = url.substring(url.indexOf("//") + 2);
      String hp = rest.substring(0, rest.indexOf('/'));
      return hp.split(":");
    }
  }

  static void capture(Source src, Path out) throws Exception {
    Workload w = new Workload(src);
    w.seed();
    Path tmp = Files.createTempDirectory("weir-debezium");
    LinkedBlockingQueue<SourceRecord> queue = new LinkedBlockingQueue<>();
    failed.set(null);
    ExecutorService exec = Executors.newSingleThreadExecutor();
    try (DebeziumEngine<RecordChangeEvent<SourceRecord>> engine =
        DebeziumEngine.create(ChangeEventFormat.of(Connect.class))
            .using(src.engineProps(tmp.resolve("offsets.dat"), tmp.resolve("history.dat")))
            .notifying(e -> queue.add(e.record()))
            .using((ok, msg, err) -> {
              if (!ok) {
                failed.set(msg);
              }
            })
            .build()) {
      exec.execute(engine);
      List<SourceRecord> seen = new ArrayList<>();
      awaitOps(queue, seen, SEED_ROWS); // the snapshot
      int changes = w.run();
      awaitOps(queue, seen, SEED_ROWS + changes);
      write(seen, out, src.kind());
      w.dumpFinal(out.resolve(src.kind() + "-final.csv"));
    } finally {
      exec.shutdown();
      exec.awaitTermination(30, TimeUnit.SECONDS);
    }
  }

  /** Why the engine stopped when it failed; awaitOps gives up at once then. */
  private static final AtomicReference<String> failed = new AtomicReference<>();

  /** Collects records until want row events (tombstones not counted) have arrived. */
  static void awaitOps(LinkedBlockingQueue<SourceRecord> queue, List<SourceRecord> seen, int want)
      throws InterruptedException {
    long rows = seen.stream().filter(r -> r.value() != null).count();
    int idle = 0;
    while (rows < want) {
      SourceRecord r = queue.poll(1, TimeUnit.SECONDS);
      if (r == null && failed.get() != null) {
        throw new IllegalStateException("Debezium engine failed: " + failed.get());
      }
      if (r == null && ++idle > 120) {
        throw new IllegalStateException("no change event in 120 s; have " + rows + " of " + want);
      }
      if (r == null) {
        continue;
      }
      idle = 0;
      if (!tableTopic(r)) {
        continue;
      }
      seen.add(r);
      if (r.value() != null) {
        rows++;
      }
    }
    // A delete's tombstone follows its event at once; take it too.
    SourceRecord r;
    while ((r = queue.poll(2, TimeUnit.SECONDS)) != null) {
      if (tableTopic(r)) {
        seen.add(r);
      }
    }
  }

  /** Whether r is on the table's topic, not the schema-change topic (named topic.prefix). */
  static boolean tableTopic(SourceRecord r) {
    return r.topic().startsWith("weir.");
  }

  static void write(List<SourceRecord> seen, Path out, String kind) throws IOException {
    for (boolean schemas : new boolean[] {true, false}) {
      JsonConverter conv = new JsonConverter();
      conv.configure(Map.of("schemas.enable", String.valueOf(schemas)), false);
      Path file = out.resolve(kind + "-" + (schemas ? "schema" : "noschema") + ".jsonl");
      try (BufferedWriter w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
        for (SourceRecord r : seen) {
          byte[] v = conv.fromConnectData(r.topic(), r.valueSchema(), r.value());
          w.write(v == null ? "null" : new String(v, StandardCharsets.UTF_8));
          w.newLine();
        }
      }
    }
  }

  /**
   * A scripted billing workload from a fixed seed: inserts, updates of the
   * amount and the note (set to NULL and back), moves of a bill to another
   * account, and deletes.
   */
  static final class Workload {
    private final Source src;
    private final Random rnd = new Random(18);
    private final List<Integer> live = new ArrayList<>();
    private final Map<Integer, String> accountOf = new java.util.HashMap<>();
    private int nextId = 1;

    Workload(Source src) {
      this.src = src;
    }

    void seed() throws SQLException {
      try (Connection c = src.connect()) {
        for (int i = 0; i < SEED_ROWS; i++) {
          insert(c);
        }
      }
    }

    /** Runs the steps, each its own transaction; returns the number of row changes. */
    int run() throws SQLException {
      int changes = 0;
      try (Connection c = src.connect()) {
        for (int i = 0; i < STEPS; i++) {
          changes += step(c);
        }
      }
      return changes;
    }

    private int step(Connection c) throws SQLException {
      int dice = rnd.nextInt(10);
      if (live.size() < 5 || dice < 4) {
        insert(c);
        return 1;
      }
      int id = live.get(rnd.nextInt(live.size()));
      if (dice < 6) {
        return exec(c, "UPDATE " + src.table() + " SET amount = ? WHERE id = ?", amount(), id);
      }
      if (dice < 7) {
        // Another account: MySQL logs no event for an update that changes nothing.
        String to = account();
        while (to.equals(accountOf.get(id))) {
          to = account();
        }
        accountOf.put(id, to);
        return exec(c, "UPDATE " + src.table() + " SET account = ? WHERE id = ?", to, id);
      }
      if (dice < 8) {
        String note = rnd.nextBoolean() ? null : "note " + rnd.nextInt(100);
        return exec(c, "UPDATE " + src.table() + " SET note = ?, amount = ? WHERE id = ?", note, amount(), id);
      }
      live.remove(Integer.valueOf(id));
      return exec(c, "DELETE FROM " + src.table() + " WHERE id = ?", id);
    }

    private void insert(Connection c) throws SQLException {
      int id = nextId++;
      String note = rnd.nextInt(3) == 0 ? null : "bill " + id;
      String account = account();
      accountOf.put(id, account);
      exec(c, "INSERT INTO " + src.table() + " (id, account, amount, note) VALUES (?, ?, ?, ?)",
          id, account, amount(), note);
      live.add(id);
    }

    private String account() {
      return ACCOUNTS[rnd.nextInt(ACCOUNTS.length)];
    }

    private java.math.BigDecimal amount() {
      return java.math.BigDecimal.valueOf(rnd.nextInt(2_000_000) - 200_000, 2);
    }

    private static int exec(Connection c, String sql, Object... args) throws SQLException {
      try (PreparedStatement ps = c.prepareStatement(sql)) {
        for (int i = 0; i < args.length; i++) {
          ps.setObject(i + 1, args[i]);
        }
        return ps.executeUpdate();
      }
    }

    /** Writes the table's final rows as id,account,amount,note (note empty for NULL: \N). */
    void dumpFinal(Path file) throws SQLException, IOException {
      try (Connection c = src.connect();
          Statement s = c.createStatement();
          ResultSet rs = s.executeQuery("SELECT id, account, amount, note FROM " + src.table() + " ORDER BY id");
          BufferedWriter w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
        w.write("id,account,amount,note");
        w.newLine();
        while (rs.next()) {
          String note = rs.getString(4);
          w.write(rs.getInt(1) + "," + rs.getString(2) + "," + rs.getBigDecimal(3).toPlainString() + ","
              + (note == null ? "\\N" : note));
          w.newLine();
        }
      }
    }
  }
}
