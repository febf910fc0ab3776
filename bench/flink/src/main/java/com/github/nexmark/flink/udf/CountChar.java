package com.github.nexmark.flink.udf;

import org.apache.flink.table.functions.ScalarFunction;

/**
 * q14's {@code count_char(s, c)}: how many characters of s equal the first
 * character of c. Nexmark's own UDF lives in its nexmark-flink jar under
 * this class name, which queries.sql's CREATE FUNCTION names; this is a
 * re-implementation of the same behaviour (a NULL s counts 0), so the
 * query text runs unchanged. Weir's Go version is in bench/nexmark/udf.go.
 */
public class CountChar extends ScalarFunction {
    public long eval(String s, String character) {
        long count = 0;
        if (s != null && character != null && !character.isEmpty()) {
            char c = character.charAt(0);
            for (int i = 0; i < s.length(); i++) {
                if (s.charAt(i) == c) {
                    count++;
                }
            }
        }
        return count;
    }
}
