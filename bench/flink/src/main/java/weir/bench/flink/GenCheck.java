package weir.bench.flink;

import weir.bench.flink.gen.Generator;
import weir.bench.flink.gen.Model;
import weir.bench.flink.gen.NexmarkConfig;

import java.io.BufferedWriter;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;

/**
 * Prints (to stdout, or to the file --out) the first --count events of the stream with --events events, in
 * (k, split) order, one canonical line each, exactly as
 * connector/nexmark/golden_test.go does: the cross-check that the Go and
 * Java generators make the same stream.
 */
public final class GenCheck {
    private GenCheck() {}

    public static void main(String[] args) throws IOException {
        long events = 1_000_000;
        int count = 1000;
        String outPath = null;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--events": events = Long.parseLong(args[i + 1]); break;
                case "--count": count = Integer.parseInt(args[i + 1]); break;
                case "--out": outPath = args[i + 1]; break;
                default: throw new IllegalArgumentException("unknown argument " + args[i]);
            }
        }
        NexmarkConfig cfg = new NexmarkConfig();
        cfg.eventsNum = events;
        Generator g = new Generator(cfg);
        // --out writes to a file: Maven's console may add escape codes to stdout.
        OutputStream sink = outPath == null ? System.out : new FileOutputStream(outPath);
        PrintWriter out = new PrintWriter(new BufferedWriter(new OutputStreamWriter(sink, StandardCharsets.UTF_8)));
        for (int i = 0; i < count; i++) {
            int s = i % g.splits();
            long k = i / g.splits();
            out.print(canonical(s, k, g.event(s, k)));
            out.print('\n');
        }
        out.flush();
        if (outPath != null) {
            out.close();
        }
    }

    static String canonical(int split, long k, Model.Event e) {
        StringBuilder b = new StringBuilder();
        switch (e.type) {
            case Model.PERSON: {
                Model.Person p = e.person;
                join(b, "P", split, k, p.id, p.name, p.emailAddress, p.creditCard, p.city, p.state, p.dateTime, digest(p.extra));
                break;
            }
            case Model.AUCTION: {
                Model.Auction a = e.auction;
                join(b, "A", split, k, a.id, a.itemName, a.description, a.initialBid, a.reserve, a.dateTime, a.expires,
                        a.seller, a.category, digest(a.extra));
                break;
            }
            default: {
                Model.Bid x = e.bid;
                join(b, "B", split, k, x.auction, x.bidder, x.price, x.channel, digest(x.url), x.dateTime, digest(x.extra));
            }
        }
        return b.toString();
    }

    private static void join(StringBuilder b, Object... fields) {
        for (int i = 0; i < fields.length; i++) {
            if (i > 0) {
                b.append('|');
            }
            b.append(fields[i]);
        }
    }

    /** "length:FNV-1a-32 in hex" of an ASCII string, as golden_test.go's digest. */
    static String digest(String s) {
        int h = 0x811c9dc5;
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        for (byte x : bytes) {
            h ^= (x & 0xff);
            h *= 0x01000193;
        }
        return bytes.length + ":" + String.format("%08x", h);
    }
}
