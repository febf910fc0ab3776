package weir.bench.flink;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads queries.sql (the Nexmark query texts, kept as data): sections start
 * at "-- ===== " lines; "qN:" sections are queries, the ddl_gen.sql section
 * is the source table and ddl_views.sql the person/auction/bid views.
 */
final class Queries {
    private static final Pattern QUERY = Pattern.compile("^-- ===== (q\\d+):");

    private final Map<String, String> sections = new LinkedHashMap<>();

    private Queries(String text) {
        String name = null;
        StringBuilder b = new StringBuilder();
        for (String line : text.split("\n", -1)) {
            if (line.startsWith("-- ===== ")) {
                if (name != null) {
                    sections.put(name, b.toString());
                }
                b.setLength(0);
                Matcher m = QUERY.matcher(line);
                name = m.find() ? m.group(1) : line.contains("(ddl_gen.sql)") ? "ddl"
                        : line.contains("(ddl_views.sql)") ? "views" : line;
                continue;
            }
            b.append(line).append('\n');
        }
        if (name != null) {
            sections.put(name, b.toString());
        }
    }

    /** The bundled copy, or the file at path when path is not null. */
    static Queries load(String path) throws IOException {
        if (path != null) {
            return new Queries(Files.readString(Path.of(path)));
        }
        try (InputStream in = Queries.class.getResourceAsStream("/nexmark/queries.sql")) {
            if (in == null) {
                throw new IOException("nexmark/queries.sql is not on the classpath");
            }
            return new Queries(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        }
    }

    /** The statements of a section ("ddl", "views", "q0" …), placeholders replaced. */
    List<String> statements(String section, Map<String, String> vars) {
        String text = sections.get(section);
        if (text == null) {
            throw new IllegalArgumentException("no section " + section + " in queries.sql; have " + sections.keySet());
        }
        for (Map.Entry<String, String> v : vars.entrySet()) {
            text = text.replace("${" + v.getKey() + "}", v.getValue());
        }
        return split(text);
    }

    /** Splits SQL text into statements at lines ending with ';', dropping comment lines. */
    static List<String> split(String text) {
        List<String> out = new ArrayList<>();
        StringBuilder b = new StringBuilder();
        for (String line : text.split("\n")) {
            String t = line.trim();
            if (t.startsWith("--") || t.isEmpty()) {
                continue;
            }
            b.append(line).append('\n');
            if (t.endsWith(";")) {
                String s = b.toString().trim();
                out.add(s.substring(0, s.length() - 1));
                b.setLength(0);
            }
        }
        if (b.toString().trim().length() > 0) {
            out.add(b.toString().trim());
        }
        return out;
    }
}
