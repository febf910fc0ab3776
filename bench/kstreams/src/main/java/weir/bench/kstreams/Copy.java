package weir.bench.kstreams;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Produced;

/**
 * Copies a topic with Kafka Streams — the same job as bench/kafka's Weir copy — and prints one JSON
 * line with records/s. The clock runs from {@code KafkaStreams.start()} until the application's
 * committed input offsets reach the input's end offsets: with exactly_once_v2 the offsets are
 * committed in the same transaction as the output, so that is the moment the last output record
 * became visible to read_committed readers (Weir's figure likewise ends with its last commit).
 *
 * <pre>
 * Copy --brokers 127.0.0.1:19092 --in bench-in --out bench-out-kstreams --records 1000000
 *      [--threads 2] [--guarantee exactly_once_v2] [--commit-interval-ms 1000] [--partitions 4]
 *      [--verify true] [--streams.KEY VALUE]...
 * </pre>
 */
public final class Copy {
  private Copy() {}

  public static void main(String[] argv) throws Exception {
    Map<String, String> a = parse(argv);
    String brokers = a.getOrDefault("brokers", "127.0.0.1:19092");
    String in = required(a, "in");
    String out = required(a, "out");
    long records = Long.parseLong(required(a, "records"));
    int threads = Integer.parseInt(a.getOrDefault("threads", "2"));
    String guarantee = a.getOrDefault("guarantee", StreamsConfig.EXACTLY_ONCE_V2);
    long commitMs = Long.parseLong(a.getOrDefault("commit-interval-ms", "1000"));
    int partitions = Integer.parseInt(a.getOrDefault("partitions", "4"));
    boolean verify = Boolean.parseBoolean(a.getOrDefault("verify", "true"));

    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, brokers))) {
      admin.createTopics(List.of(new NewTopic(out, partitions, (short) 1))).all().get();
      Map<TopicPartition, Long> ends = endOffsets(admin, in);
      String appId = "weir-bench-kstreams-" + System.currentTimeMillis();
      Path stateDir = Files.createTempDirectory("weir-bench-kstreams-");

      Properties p = new Properties();
      p.put(StreamsConfig.APPLICATION_ID_CONFIG, appId);
      p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, brokers);
      p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, guarantee);
      p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, commitMs);
      p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, threads);
      p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
      p.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
      // --streams.<key> <value> passes any other Streams or client property (e.g.
      // --streams.producer.batch.size 1048576); the defaults are Kafka's.
      a.forEach((k, v) -> {
        if (k.startsWith("streams.")) {
          p.put(k.substring("streams.".length()), v);
        }
      });

      // first: when the first record was processed, to tell the group join and task
      // start-up apart from the copy itself (reported as a second figure).
      AtomicLong first = new AtomicLong();
      StreamsBuilder b = new StreamsBuilder();
      b.stream(in, Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()))
          .peek((k, v) -> first.compareAndSet(0, System.nanoTime()))
          .to(out, Produced.with(Serdes.ByteArray(), Serdes.ByteArray()));

      KafkaStreams streams = new KafkaStreams(b.build(), p);
      long t0 = System.nanoTime();
      streams.start();
      waitCommitted(admin, appId, ends, Duration.ofMinutes(30));
      long t1 = System.nanoTime();
      double seconds = (t1 - t0) / 1e9;
      double fromFirst = (t1 - first.get()) / 1e9;
      streams.close(Duration.ofSeconds(60));

      long output = verify ? countCommitted(brokers, admin, out) : -1;
      System.out.printf(
          "{\"engine\":\"kafka-streams\",\"guarantee\":\"%s\",\"records\":%d,\"threads\":%d,"
              + "\"commit_interval_ms\":%d,\"seconds\":%.6f,\"records_per_second\":%.1f,"
              + "\"records_per_second_from_first_record\":%.1f%s}%n",
          guarantee, records, threads, commitMs, seconds, records / seconds, records / fromFirst,
          verify ? ",\"output_records\":" + output : "");
    }
  }

  /** The last stable offsets of every partition of topic. */
  static Map<TopicPartition, Long> endOffsets(Admin admin, String topic) throws Exception {
    var desc = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
    Map<TopicPartition, OffsetSpec> req = new HashMap<>();
    desc.partitions().forEach(pi -> req.put(new TopicPartition(topic, pi.partition()), OffsetSpec.latest()));
    var res = admin.listOffsets(req, new ListOffsetsOptions(IsolationLevel.READ_COMMITTED)).all().get();
    Map<TopicPartition, Long> out = new HashMap<>();
    res.forEach((tp, info) -> out.put(tp, info.offset()));
    return out;
  }

  /** Polls the group's committed offsets until every partition reached its end offset. */
  static void waitCommitted(Admin admin, String group, Map<TopicPartition, Long> ends, Duration timeout)
      throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      Map<TopicPartition, OffsetAndMetadata> got =
          admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
      boolean done = true;
      for (var e : ends.entrySet()) {
        OffsetAndMetadata o = got.get(e.getKey());
        if (e.getValue() > 0 && (o == null || o.offset() < e.getValue())) {
          done = false;
          break;
        }
      }
      if (done) {
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("the copy did not finish within " + timeout + "; committed " + got);
      }
      Thread.sleep(20);
    }
  }

  /** Counts the committed data records of topic (read_committed, up to the last stable offsets). */
  static long countCommitted(String brokers, Admin admin, String topic) throws Exception {
    Map<TopicPartition, Long> ends = endOffsets(admin, topic);
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, brokers);
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "5000");
    long n = 0;
    try (var c = new KafkaConsumer<byte[], byte[]>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      List<TopicPartition> tps = new ArrayList<>(ends.keySet());
      c.assign(tps);
      c.seekToBeginning(tps);
      long deadline = System.nanoTime() + Duration.ofMinutes(5).toNanos();
      while (!reached(c, ends)) {
        ConsumerRecords<byte[], byte[]> recs = c.poll(Duration.ofMillis(200));
        n += recs.count();
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("counting " + topic + " did not finish");
        }
      }
    }
    return n;
  }

  private static boolean reached(KafkaConsumer<byte[], byte[]> c, Map<TopicPartition, Long> ends) {
    for (var e : ends.entrySet()) {
      if (c.position(e.getKey()) < e.getValue()) {
        return false;
      }
    }
    return true;
  }

  private static Map<String, String> parse(String[] argv) {
    Map<String, String> m = new HashMap<>();
    for (int i = 0; i < argv.length; i++) {
      if (!argv[i].startsWith("--") || i + 1 >= argv.length) {
        throw new IllegalArgumentException("arguments are --name value pairs; got " + argv[i]);
      }
      m.put(argv[i].substring(2), argv[++i]);
    }
    return m;
  }

  private static String required(Map<String, String> a, String k) {
    String v = a.get(k);
    if (v == null) {
      throw new IllegalArgumentException("--" + k + " is required");
    }
    return v;
  }
}
