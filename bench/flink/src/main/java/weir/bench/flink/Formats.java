package weir.bench.flink;

import java.lang.management.ManagementFactory;
import java.math.BigDecimal;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.flink.api.common.serialization.DeserializationSchema;
import org.apache.flink.api.common.serialization.SerializationSchema;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.factories.DeserializationFormatFactory;
import org.apache.flink.table.factories.FactoryUtil;
import org.apache.flink.table.factories.SerializationFormatFactory;
import org.apache.flink.table.runtime.connector.sink.SinkRuntimeProviderContext;
import org.apache.flink.table.runtime.connector.source.ScanRuntimeProviderContext;
import org.apache.flink.table.types.DataType;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.Collector;
import org.apache.flink.util.SimpleUserCodeClassLoader;
import org.apache.flink.util.UserCodeClassLoader;

/**
 * Flink's side of bench/formats: each format's encoder and decoder, made by its table factory as a
 * Flink SQL job makes them, encode and decode the same bills rows (and the same changelog update
 * messages) as Weir's, on one thread. It prints records per second of process CPU time
 * (OperatingSystemMXBean: every thread, GC and JIT included) after two warm-up runs of the same size,
 * in the Go command's table layout.
 *
 * <pre>./run.sh Formats --n 200000</pre>
 */
public final class Formats {
  static final DataType BILLS =
      DataTypes.ROW(
          DataTypes.FIELD("bill_id", DataTypes.STRING()),
          DataTypes.FIELD("amount", DataTypes.DECIMAL(18, 2)),
          DataTypes.FIELD("n", DataTypes.BIGINT()),
          DataTypes.FIELD("ts", DataTypes.TIMESTAMP(3)),
          DataTypes.FIELD("ok", DataTypes.BOOLEAN()));

  /** The changelog formats' update messages, as bench/formats writes them: two rows each. */
  static final Map<String, String> UPDATES =
      Map.of(
          "debezium-json",
          "{\"before\":{\"bill_id\":\"b-%07d\",\"amount\":1000.00,\"n\":41,\"ts\":\"2026-11-30 08:00:00.000\",\"ok\":true},\"after\":{\"bill_id\":\"b-%1$07d\",\"amount\":1234.56,\"n\":%1$d,\"ts\":\"2026-11-30 08:00:01.250\",\"ok\":true},\"source\":{\"connector\":\"mysql\",\"db\":\"shop\",\"table\":\"bills\",\"file\":\"mysql-bin.000003\",\"pos\":154},\"op\":\"u\",\"ts_ms\":1764489601250}",
          "canal-json",
          "{\"data\":[{\"bill_id\":\"b-%07d\",\"amount\":\"1234.56\",\"n\":\"%1$d\",\"ts\":\"2026-11-30 08:00:01.250\",\"ok\":\"true\"}],\"old\":[{\"amount\":\"1000.00\",\"n\":\"41\"}],\"database\":\"shop\",\"table\":\"bills\",\"type\":\"UPDATE\",\"ts\":1764489601250}",
          "maxwell-json",
          "{\"database\":\"shop\",\"table\":\"bills\",\"type\":\"update\",\"ts\":1764489601,\"data\":{\"bill_id\":\"b-%07d\",\"amount\":1234.56,\"n\":%1$d,\"ts\":\"2026-11-30 08:00:01.250\",\"ok\":true},\"old\":{\"amount\":1000.00,\"n\":41}}");

  public static void main(String[] args) throws Exception {
    int n = 200000;
    for (int i = 0; i + 1 < args.length; i += 2) {
      if (args[i].equals("--n")) {
        n = Integer.parseInt(args[i + 1]);
      }
    }
    System.out.printf("%-16s %-10s %12s %12s %10s%n", "format", "direction", "records", "records/s", "rec/s/core");
    List<RowData> rows = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      rows.add(bill(i, RowKind.INSERT));
    }
    for (String f : List.of("json", "csv", "avro")) {
      rowFormat(f, rows);
    }
    for (String f : List.of("debezium-json", "canal-json", "maxwell-json")) {
      changelog(f, rows);
    }
  }

  static RowData bill(int i, RowKind kind) {
    GenericRowData r =
        GenericRowData.of(
            StringData.fromString(String.format("b-%07d", i)),
            DecimalData.fromBigDecimal(BigDecimal.valueOf((i % 100000) * 101L, 2), 18, 2),
            (long) i,
            TimestampData.fromLocalDateTime(LocalDateTime.of(2026, 11, 30, 8, 0).plusNanos(i * 1_000_000L)),
            i % 3 != 0);
    r.setRowKind(kind);
    return r;
  }

  static void rowFormat(String name, List<RowData> rows) throws Exception {
    SerializationSchema<RowData> enc = encoder(name);
    DeserializationSchema<RowData> dec = decoder(name);
    byte[][] msgs = new byte[rows.size()][];
    measure(name, "encode", rows.size(), () -> {
      for (int i = 0; i < msgs.length; i++) {
        msgs[i] = enc.serialize(rows.get(i));
      }
    });
    measure(name, "decode", rows.size(), () -> {
      for (byte[] m : msgs) {
        if (dec.deserialize(m) == null) {
          throw new IllegalStateException("no row");
        }
      }
    });
  }

  static void changelog(String name, List<RowData> rows) throws Exception {
    SerializationSchema<RowData> enc = encoder(name);
    DeserializationSchema<RowData> dec = decoder(name);
    List<RowData> after = new ArrayList<>();
    for (int i = 0; i < rows.size(); i++) {
      after.add(bill(i, RowKind.UPDATE_AFTER));
    }
    measure(name, "encode", after.size(), () -> {
      for (RowData r : after) {
        enc.serialize(r);
      }
    });
    byte[][] msgs = new byte[rows.size() / 2][];
    for (int i = 0; i < msgs.length; i++) {
      msgs[i] = String.format(UPDATES.get(name), i).getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }
    int[] got = {0};
    Collector<RowData> out = new Collector<>() {
      public void collect(RowData r) { got[0]++; }
      public void close() {}
    };
    measure(name, "decode", 2 * msgs.length, () -> {
      got[0] = 0;
      for (byte[] m : msgs) {
        dec.deserialize(m, out);
      }
      if (got[0] != 2 * msgs.length) {
        throw new IllegalStateException(got[0] + " rows, want " + 2 * msgs.length);
      }
    });
  }

  /** The format's encoder for BILLS, made by its factory with its default options. */
  static SerializationSchema<RowData> encoder(String name) throws Exception {
    SerializationFormatFactory f =
        FactoryUtil.discoverFactory(Formats.class.getClassLoader(), SerializationFormatFactory.class, name);
    SerializationSchema<RowData> s =
        f.createEncodingFormat(null, options(name)).createRuntimeEncoder(new SinkRuntimeProviderContext(false), BILLS);
    s.open(new SerializationSchema.InitializationContext() {
      public MetricGroup getMetricGroup() { return new UnregisteredMetricsGroup(); }
      public UserCodeClassLoader getUserCodeClassLoader() { return SimpleUserCodeClassLoader.create(Formats.class.getClassLoader()); }
    });
    return s;
  }

  /** The format's decoder for BILLS, made by its factory with its default options. */
  static DeserializationSchema<RowData> decoder(String name) throws Exception {
    DeserializationFormatFactory f =
        FactoryUtil.discoverFactory(Formats.class.getClassLoader(), DeserializationFormatFactory.class, name);
    DeserializationSchema<RowData> d =
        f.createDecodingFormat(null, options(name)).createRuntimeDecoder(ScanRuntimeProviderContext.INSTANCE, BILLS);
    d.open(new DeserializationSchema.InitializationContext() {
      public MetricGroup getMetricGroup() { return new UnregisteredMetricsGroup(); }
      public UserCodeClassLoader getUserCodeClassLoader() { return SimpleUserCodeClassLoader.create(Formats.class.getClassLoader()); }
    });
    return d;
  }

  /** options are a format's: none set, so each runs with Flink's defaults, as Weir's do. */
  static Configuration options(String name) {
    return new Configuration();
  }

  interface Work {
    void run() throws Exception;
  }

  /** measure runs work three times (two warm the JIT up) and prints the last run's rates. */
  static void measure(String name, String dir, int records, Work work) throws Exception {
    work.run();
    work.run();
    System.gc();
    com.sun.management.OperatingSystemMXBean os =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    long cpu0 = os.getProcessCpuTime(), t0 = System.nanoTime();
    work.run();
    double wall = (System.nanoTime() - t0) / 1e9, cpu = (os.getProcessCpuTime() - cpu0) / 1e9;
    System.out.printf("%-16s %-10s %12d %12.0f %10.0f%n", name, dir, records, records / wall, records / cpu);
  }
}
