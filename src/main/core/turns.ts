/**
 * Agents' work yields to the person's console (issue 9 item 3).
 *
 * The console's UI (the approval dialog, the receipts view) and every agent
 * share one Node event loop. Node serves all the I/O that is ready in one pass
 * and then runs what it set aside (`setImmediate`), so a burst of agent calls
 * ran back to back and a click in the UI waited behind all of them. `Turns`
 * hands out turns one per pass of the event loop: agent work that takes a turn
 * runs one piece at a time, and between two pieces Node reads the sockets
 * again, so the UI's message waits for at most one piece of agent work.
 *
 * Agent work takes a turn when an agent tool call starts (the endpoint) and
 * each time it resumes after its receipts reached the disk (the pipeline's
 * `Trail.settle`): the places where many requests would otherwise resume at
 * once. A turn costs one pass of the event loop (microseconds when idle).
 */

/** A FIFO of waiters, released one per pass of the event loop. */
export class Turns {
  private readonly queue: Array<() => void> = [];
  private scheduled = false;

  /** Resolves when it is the caller's turn: in order, at most one per pass of the event loop. Never rejects. */
  take(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.queue.push(resolve);
      this.schedule();
    });
  }

  /** Waiters not yet released. */
  get waiting(): number {
    return this.queue.length;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      const next = this.queue.shift();
      // The next release is set aside for the NEXT pass: Node runs callbacks added while it runs the set-aside ones on the following pass.
      if (this.queue.length > 0) this.schedule();
      next?.();
    });
  }
}
