package io.leafid.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Worker: ids made in memory on a leased worker id, renewed, released, stopped when lost. */
class WorkerTest {
  @Test
  void idsOnALeasedWorker() throws Exception {
    FakeLeaf fake = new FakeLeaf();
    try (LeafClient c = new LeafClient(List.of(fake.url))) {
      Worker w = c.leaseWorker("proc-a", Duration.ofSeconds(3));
      Worker w2 = c.leaseWorker("proc-b", Duration.ofSeconds(3));
      assertNotEquals(w.workerId(), w2.workerId());
      Set<Long> ids = new HashSet<>();
      long last = 0;
      for (int i = 0; i < 20000; i++) {
        long id = w.next();
        assertTrue(id > last);
        last = id;
        ids.add(id);
      }
      assertEquals(20000, ids.size());
      assertEquals(w.workerId(), w.layout().workerId(last));
      Thread.sleep(1200); // a renewal, every third of the TTL
      assertTrue(fake.count("/api/snowflake/leases/") >= 2);
      w.close();
      w2.close();
      synchronized (fake) {
        assertTrue(fake.released.containsKey(w.workerId()));
      }
      assertThrows(LeafClosedException.class, w::next);
    } finally {
      fake.close();
    }
  }

  @Test
  void aLeaseLostStopsTheWorker() throws Exception {
    FakeLeaf fake = new FakeLeaf();
    try (LeafClient c = new LeafClient(List.of(fake.url))) {
      Worker w = c.leaseWorker("proc", Duration.ofSeconds(3));
      synchronized (fake) {
        fake.leases.put(w.workerId(), "taken by another");
      }
      Thread.sleep(1300);
      LeafException e = assertThrows(LeafException.class, w::next);
      assertEquals(ErrorCode.LEASE_LOST, e.code());
    } finally {
      fake.close();
    }
  }
}
