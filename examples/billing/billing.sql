-- The billing job in Flink SQL: bills from Kafka, de-duplicated across
-- checkpoints, summed per account, written to MariaDB exactly once.
--
--   scripts/services.sh up && eval "$(scripts/services.sh env)"
--   weir tool gen-bills --bills 200000 --truth truth.csv
--   (create account_totals in MariaDB: see README.md)
--   weir run examples/billing/billing.sql
--
-- ${WEIR_KAFKA_BROKERS}, ${WEIR_BILLING_JDBC_URL} (jdbc:mysql://… or
-- jdbc:postgresql://…) and ${WEIR_BILLING_CHECKPOINTS} come from the environment.

SET 'execution.checkpointing.interval' = '1 s';
SET 'execution.checkpointing.mode' = 'EXACTLY_ONCE';
SET 'execution.checkpointing.dir' = '${WEIR_BILLING_CHECKPOINTS}';
SET 'parallelism.default' = '2';
SET 'pipeline.name' = 'billing';

CREATE TABLE bills (
  bill_id    STRING,
  account_id STRING,
  amount     DECIMAL(18, 2),
  currency   STRING,
  ts         TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH (
  'connector' = 'kafka',
  'topic' = 'bills',
  'properties.bootstrap.servers' = '${WEIR_KAFKA_BROKERS}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  -- A record that is not a valid bill (not JSON, a missing field, a timestamp
  -- that does not parse) goes to bills-dlq with its topic/partition/offset and
  -- the error; its offset still moves forward in the checkpoint.
  'scan.bad-record.policy' = 'dead-letter',
  'scan.bad-record.dead-letter-topic' = 'bills-dlq',
  'format' = 'json',
  'json.fail-on-missing-field' = 'true'
);

CREATE TABLE account_totals (
  account_id STRING,
  total      DECIMAL(38, 2),
  bill_count BIGINT,
  PRIMARY KEY (account_id) NOT ENFORCED
) WITH (
  'connector' = 'jdbc',
  'url' = '${WEIR_BILLING_JDBC_URL}',
  'table-name' = 'account_totals',
  'username' = 'weir',
  'password' = 'weir',
  'sink.delivery-guarantee' = 'exactly-once'
);

-- A producer that retries sends the same bill twice, minutes apart: keep the
-- first row of every bill_id (state kept for a day), then total per account.
INSERT INTO account_totals
SELECT account_id, SUM(amount) AS total, COUNT(*) AS bill_count
FROM (
  SELECT /*+ STATE_TTL('bills' = '1 d') */ *,
         ROW_NUMBER() OVER (PARTITION BY bill_id ORDER BY ts ASC) AS rn
  FROM bills
)
WHERE rn = 1
GROUP BY account_id;
