package weir.bench.flink.gen;

/**
 * 10^y for y in [0, 6) with + - * / only, in the same order as pow10 in
 * connector/nexmark/rand.go, so both languages get the same bits (Java's
 * Math.pow and Go's math.Pow may differ in the last one).
 */
final class Pow10 {
    private static final double LN10 = 2.302585092994046;
    private static final double[] POWERS = {1, 10, 100, 1e3, 1e4, 1e5, 1e6};
    private static final double[] INV_FACTORIAL = new double[28];
    private static final double[] STEPS = new double[6 * 256];

    static {
        INV_FACTORIAL[0] = 1;
        for (int i = 1; i < INV_FACTORIAL.length; i++) {
            INV_FACTORIAL[i] = INV_FACTORIAL[i - 1] / i;
        }
        for (int j = 0; j < STEPS.length; j++) {
            STEPS[j] = POWERS[j >> 8] * expSeries((j & 255) / 256.0 * LN10, INV_FACTORIAL.length);
        }
    }

    private Pow10() {}

    static double expSeries(double x, int terms) {
        double p = INV_FACTORIAL[terms - 1];
        for (int i = terms - 2; i >= 0; i--) {
            p = p * x + INV_FACTORIAL[i];
        }
        return p;
    }

    static double pow10(double y) {
        int j = (int) (y * 256);
        double x = (y - j / 256.0) * LN10;
        return STEPS[j] * expSeries(x, 7);
    }
}
