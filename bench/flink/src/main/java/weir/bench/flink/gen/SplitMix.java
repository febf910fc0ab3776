package weir.bench.flink.gen;

/**
 * SplitMix64 with Stafford's variant-13 mixer: the Java twin of rng in
 * connector/nexmark/rand.go. Every method must draw exactly what the Go one
 * draws; golden-1000.txt and GenCheck check it.
 */
final class SplitMix {
    private static final long GOLDEN = 0x9e3779b97f4a7c15L;

    private long s;

    static long mix64(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    /** The generator for a seed; the seed is mixed once, as in Go's seeded. */
    SplitMix(long seed) {
        s = mix64(seed);
    }

    long next() {
        s += GOLDEN;
        return mix64(s);
    }

    /** Uniform in [0, n) for 0 < n < 2^31: 31 bits, rejecting the top partial interval. */
    int intn(int n) {
        long bound = n;
        long u = next() >>> 33;
        long v = u % bound;
        while (u - v + (bound - 1) >= (1L << 31)) {
            u = next() >>> 33;
            v = u % bound;
        }
        return (int) v;
    }

    /** Nexmark's LongGenerator.nextLong. */
    long longn(long n) {
        if (n < Integer.MAX_VALUE) {
            return intn((int) n);
        }
        long v = next() % n;
        return v < 0 ? -v : v;
    }

    double nextDouble() {
        return (next() >>> 11) * 0x1.0p-53;
    }

    /** round(10^(u*6) * 100) cents. */
    long price() {
        return Math.round(Pow10.pow10(nextDouble() * 6) * 100);
    }

    /** Nexmark's nextString: 3 to maxLen-1 characters, trimmed of spaces. */
    String str(int maxLen, char special) {
        int n = 3 + intn(maxLen - 3);
        char[] b = new char[n];
        for (int i = 0; i < n; i++) {
            if (intn(13) == 0) {
                b[i] = special;
            } else {
                b[i] = (char) ('a' + intn(26));
            }
        }
        return new String(b).trim();
    }

    /** Nexmark's nextExtra, cut from the shared 1 MiB text. */
    String extra(int cur, int avg) {
        if (cur > avg) {
            return "";
        }
        int d = avg - cur;
        int delta = (int) Math.round(d * 0.2);
        int n = d - delta;
        if (delta != 0) {
            n += intn(2 * delta);
        }
        int off = intn(Tables.TEXT_LEN - n);
        return Tables.TEXT.substring(off, off + n);
    }
}
