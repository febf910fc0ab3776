package weir.bench.flink.backpressure;

import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * A job's checkpoint statistics as the JobManager's REST API reports them:
 * the counts and history of {@code /jobs/:id/checkpoints} (durations are
 * {@code end_to_end_duration}, channel state {@code persisted_data}) and, for
 * every completed checkpoint, the sink vertex's subtasks' {@code start_delay}
 * from {@code /jobs/:id/checkpoints/details/:cid/subtasks/:vid} — the time
 * from the trigger to the first barrier at the subtask — and alignment
 * {@code duration} (first barrier to the snapshot).
 */
public final class CheckpointStats {
    long completed;
    long failed;
    long inProgress;
    long unalignedCompleted;
    long before; // triggered before the measured window
    final List<Long> durationsMs = new ArrayList<>();
    final List<Long> persisted = new ArrayList<>();
    final List<Long> processed = new ArrayList<>();
    final List<Long> checkpointed = new ArrayList<>();
    final List<Long> startDelaysMs = new ArrayList<>();
    final List<Long> alignmentsMs = new ArrayList<>();
    final List<Long> inProgressMs = new ArrayList<>();
    final List<String> failures = new ArrayList<>();

    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * Reads job's statistics from the REST endpoint at rest, of the
     * checkpoints triggered at or after sinceMillis (wall clock); sinkVertex
     * is the sink's vertex id.
     */
    public static CheckpointStats read(URI rest, String job, String sinkVertex, long sinceMillis)
            throws IOException, InterruptedException {
        HttpClient http = HttpClient.newHttpClient();
        JsonNode root = get(http, rest, "/jobs/" + job + "/checkpoints");
        CheckpointStats s = new CheckpointStats();
        for (JsonNode h : root.path("history")) {
            if (h.path("is_savepoint").asBoolean()) {
                continue;
            }
            if (h.path("trigger_timestamp").asLong() < sinceMillis) {
                s.before++;
                continue;
            }
            switch (h.path("status").asText()) {
                case "COMPLETED" -> {
                    s.completed++;
                    s.durationsMs.add(h.path("end_to_end_duration").asLong());
                    s.persisted.add(h.path("persisted_data").asLong());
                    s.processed.add(h.path("processed_data").asLong());
                    s.checkpointed.add(h.path("checkpointed_size").asLong());
                    if ("UNALIGNED_CHECKPOINT".equals(h.path("checkpoint_type").asText())) {
                        s.unalignedCompleted++;
                    }
                    String path = "/jobs/" + job + "/checkpoints/details/" + h.path("id").asLong() + "/subtasks/"
                            + sinkVertex;
                    for (JsonNode st : get(http, rest, path).path("subtasks")) {
                        if (st.has("start_delay")) {
                            s.startDelaysMs.add(st.path("start_delay").asLong());
                            s.alignmentsMs.add(st.path("alignment").path("duration").asLong());
                        }
                    }
                }
                case "IN_PROGRESS" -> {
                    s.inProgress++;
                    s.inProgressMs.add(h.path("end_to_end_duration").asLong());
                }
                case "FAILED" -> {
                    s.failed++;
                    s.failures.add(h.path("failure_message").asText());
                }
                default -> {}
            }
        }
        return s;
    }

    private static JsonNode get(HttpClient http, URI rest, String path) throws IOException, InterruptedException {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(rest.resolve(path)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new IOException("GET " + path + ": HTTP " + r.statusCode() + ": " + r.body());
        }
        return JSON.readTree(r.body());
    }

    /** The nearest-rank p-th percentile, as bench/backpressure's pct (0 for none). */
    static long pct(List<Long> xs, int p) {
        if (xs.isEmpty()) {
            return 0;
        }
        List<Long> s = new ArrayList<>(xs);
        Collections.sort(s);
        int i = (s.size() * p + 99) / 100;
        return s.get(Math.max(0, Math.min(s.size() - 1, i - 1)));
    }

    static long mean(List<Long> xs) {
        long sum = 0;
        for (long x : xs) {
            sum += x;
        }
        return xs.isEmpty() ? 0 : sum / xs.size();
    }

    /** The statistics as JSON members (no braces). */
    public String json() {
        return String.format(Locale.ROOT,
                "\"before_window\":%d,\"completed\":%d,\"failed\":%d,\"in_progress\":%d,\"unaligned_completed\":%d,"
                        + "\"p50_ms\":%d,\"p99_ms\":%d,\"max_ms\":%d,\"persisted_bytes_per_cp\":%d,"
                        + "\"processed_bytes_per_cp\":%d,\"checkpointed_bytes_per_cp\":%d,"
                        + "\"start_delay_p50_ms\":%d,\"start_delay_p99_ms\":%d,"
                        + "\"durations_ms\":%s,\"persisted_bytes\":%s,\"start_delays_ms\":%s,\"alignments_ms\":%s,\"in_progress_ms\":%s,\"failures\":%s",
                before, completed, failed, inProgress, unalignedCompleted, pct(durationsMs, 50), pct(durationsMs, 99),
                pct(durationsMs, 100), mean(persisted), mean(processed), mean(checkpointed), pct(startDelaysMs, 50),
                pct(startDelaysMs, 99), list(durationsMs), list(persisted), list(startDelaysMs), list(alignmentsMs), list(inProgressMs),
                JSON.valueToTree(failures).toString());
    }

    private static String list(List<Long> xs) {
        return xs.stream().map(String::valueOf).collect(Collectors.joining(",", "[", "]"));
    }
}
