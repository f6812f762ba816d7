/**
 * Hosts for partition tests: network namespaces (`ip netns`), each joined by a veth pair to one
 * bridge in the root namespace that carries a private address Postgres can listen on. A host is
 * cut off by taking its veth pair's carrier away: its TCP connections hang as they do when a
 * network fails, rather than closing. Needs root.
 */
import { execFileSync } from "node:child_process";

/** Why namespaces cannot be made here, or null when they can. */
export function netnsUnavailableReason(): string | null {
  if (process.getuid?.() !== 0) return "not root: network namespaces need CAP_NET_ADMIN";
  try {
    execFileSync("ip", ["netns", "list"], { stdio: "ignore" });
  } catch {
    return "the ip command is missing (iproute2)";
  }
  return null;
}

function ip(...args: string[]): void {
  execFileSync("ip", args, { stdio: ["ignore", "ignore", "pipe"] });
}

/** One host: its namespace, its address, and its veth ends. */
export interface Host {
  name: string;
  netns: string;
  address: string;
  /** The command prefix that runs a process on this host. */
  prefix: string[];
  /** The veth end on the bridge side, and the one inside the namespace. */
  outer: string;
  inner: string;
}

/** A bridge and its hosts; {@link HostNetwork.destroy} removes all of it. */
export class HostNetwork {
  readonly hosts: Host[] = [];
  readonly bridge: string;
  /** The bridge's address, reachable from every host (Postgres listens here). */
  readonly gateway: string;
  private readonly subnet: string;

  constructor(private readonly id = `rp${process.pid % 100000}`) {
    this.bridge = `${id}br`;
    // A private /24 of its own per test process, under 10.213.0.0/16.
    this.subnet = `10.213.${(process.pid % 200) + 20}`;
    this.gateway = `${this.subnet}.1`;
  }

  /** The subnet in CIDR form, for pg_hba. */
  get cidr(): string {
    return `${this.subnet}.0/24`;
  }

  /** Creates the bridge and `count` hosts. */
  create(count: number): void {
    ip("link", "add", this.bridge, "type", "bridge");
    ip("addr", "add", `${this.gateway}/24`, "dev", this.bridge);
    ip("link", "set", this.bridge, "up");
    for (let i = 0; i < count; i++) {
      const host: Host = {
        name: String.fromCharCode(97 + i),
        netns: `${this.id}-${i}`,
        address: `${this.subnet}.${10 + i}`,
        prefix: ["ip", "netns", "exec", `${this.id}-${i}`],
        outer: `${this.id}o${i}`,
        inner: `${this.id}i${i}`,
      };
      this.hosts.push(host);
      ip("netns", "add", host.netns);
      ip("link", "add", host.outer, "type", "veth", "peer", "name", host.inner);
      ip("link", "set", host.inner, "netns", host.netns);
      ip("link", "set", host.outer, "master", this.bridge);
      ip("link", "set", host.outer, "up");
      ip("netns", "exec", host.netns, "ip", "addr", "add", `${host.address}/24`, "dev", host.inner);
      ip("netns", "exec", host.netns, "ip", "link", "set", host.inner, "up");
      ip("netns", "exec", host.netns, "ip", "link", "set", "lo", "up");
    }
  }

  /**
   * Drops every packet to and from `host`: its bridge-side veth end goes down, so the end in
   * its namespace loses carrier and the kernel drops what either side sends (no reset, no
   * error: the host's connections hang, as they do when a network fails).
   */
  cut(host: Host): void {
    ip("link", "set", host.outer, "down");
  }

  /** Lets `host`'s packets through again. */
  heal(host: Host): void {
    ip("link", "set", host.outer, "up");
  }

  /** Removes every namespace and link made (each step on its own, so one failure skips none). */
  destroy(): void {
    for (const host of this.hosts.splice(0)) {
      for (const step of [
        () => ip("link", "del", host.outer),
        () => ip("netns", "del", host.netns),
      ])
        try {
          step();
        } catch {
          // Already gone.
        }
    }
    try {
      ip("link", "del", this.bridge);
    } catch {
      // Already gone.
    }
  }
}
