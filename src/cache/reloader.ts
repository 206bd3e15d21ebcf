/**
 * Reloads something (the settings, the plugin flags) when asked, one load at a time: a request made while
 * a load is under way (which may have read before the change) runs one more load after it.
 */
export class Reloader {
  private running: Promise<void> | undefined;
  private again = false;

  constructor(private readonly load: () => Promise<void>) {}

  request(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.run();
  }

  /** The reload under way (requests wait for it, so that they see the change), if any. */
  get pending(): Promise<void> | undefined {
    return this.running;
  }

  private async run(): Promise<void> {
    try {
      do {
        this.again = false;
        // A failed reload leaves the previous values; the safety reload tries again later.
        await this.load().catch(() => {});
      } while (this.again);
    } finally {
      this.running = undefined;
    }
  }
}
