/* node_iface.c — which network interface of this host the other nodes reach it
 * through, for a workload whose own transport would guess wrong.
 *
 * PyTorch's gloo binds to the address the host's own name resolves to. Where
 * that is a loopback address (Debian's /etc/hosts maps the host name to
 * 127.0.1.1; a name no resolver knows falls back to 127.0.0.1), every rank
 * tells the others to connect to its loopback address and the job fails with
 * "connect [127.0.0.1]:N: Connection refused" on the first collective.
 * GLOO_SOCKET_IFNAME names the interface to bind to instead; the launcher
 * knows the address the other nodes use for this one (the hostfile's name for
 * the host, which ssh reached it by), so `pitstop node-exec --addr HOST` sets
 * it from here.
 *
 * Invariant: only looks (getaddrinfo, getifaddrs, getsockname on an unsent
 * UDP socket): nothing is sent, nothing set. A loopback interface is never
 * the answer. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "provider/provider_impl.h"

static int same_addr(const struct sockaddr *a, const struct sockaddr *b) {
  if (!a || !b || a->sa_family != b->sa_family)
    return 0;
  if (a->sa_family == AF_INET)
    return ((const struct sockaddr_in *)a)->sin_addr.s_addr == ((const struct sockaddr_in *)b)->sin_addr.s_addr;
  if (a->sa_family == AF_INET6)
    return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr, &((const struct sockaddr_in6 *)b)->sin6_addr,
                  sizeof(struct in6_addr)) == 0;
  return 0;
}

/* The up, non-loopback interface of ifs that holds addr, into name; 0 when found. */
static int iface_holding(const struct ifaddrs *ifs, const struct sockaddr *addr, char *name, size_t cap) {
  for (const struct ifaddrs *i = ifs; i; i = i->ifa_next)
    if ((i->ifa_flags & IFF_UP) && !(i->ifa_flags & IFF_LOOPBACK) && same_addr(i->ifa_addr, addr)) {
      snprintf(name, cap, "%s", i->ifa_name);
      return 0;
    }
  return -1;
}

/* The local address this host's routes would send from to reach to (a UDP
 * socket connected, never written to), into local; 0 on success. */
static int source_toward(const struct sockaddr *to, socklen_t tolen, struct sockaddr_storage *local) {
  int s = socket(to->sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0)
    return -1;
  struct sockaddr_storage t;
  memcpy(&t, to, tolen);
  if (t.ss_family == AF_INET && ((struct sockaddr_in *)&t)->sin_port == 0)
    ((struct sockaddr_in *)&t)->sin_port = htons(9);
  if (t.ss_family == AF_INET6 && ((struct sockaddr_in6 *)&t)->sin6_port == 0)
    ((struct sockaddr_in6 *)&t)->sin6_port = htons(9);
  socklen_t len = sizeof *local;
  int rc = connect(s, (struct sockaddr *)&t, tolen) == 0 && getsockname(s, (struct sockaddr *)local, &len) == 0 ? 0 : -1;
  close(s);
  return rc;
}

/* The server address of $SSH_CONNECTION ("client port server port"): the
 * address ssh reached this host at; 0 when there is one. */
static int ssh_server_addr(char *out, size_t cap) {
  const char *c = getenv("SSH_CONNECTION");
  char cl[128], cp[16], sv[128];
  if (!c || sscanf(c, "%127s %15s %127s", cl, cp, sv) != 3)
    return -1;
  snprintf(out, cap, "%s", sv);
  return 0;
}

/* name's addresses (numeric or resolved here): the interface holding one of
 * them, else (route = 1) the one the routes toward the first would use. */
static int iface_of_name(const struct ifaddrs *ifs, const char *host, int route, char *name, size_t cap) {
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_DGRAM}, *res = NULL;
  if (getaddrinfo(host, NULL, &hints, &res) != 0 || !res)
    return -1;
  int rc = -1;
  for (struct addrinfo *a = res; a && rc < 0; a = a->ai_next)
    rc = iface_holding(ifs, a->ai_addr, name, cap);
  struct sockaddr_storage local;
  if (rc < 0 && route && source_toward(res->ai_addr, res->ai_addrlen, &local) == 0)
    rc = iface_holding(ifs, (struct sockaddr *)&local, name, cap);
  freeaddrinfo(res);
  return rc;
}

int pit_node_iface(const char *host, char *name, size_t cap, struct pit_err *e) {
  struct ifaddrs *ifs = NULL;
  if (getifaddrs(&ifs) < 0)
    return pit_err_errno(e, PIT_EIO, "cannot list this host's network interfaces");
  char sv[128];
  /* the host's name as the others use it; else the address ssh came in by; else the route
   * toward that name (a NAT'd address: the interface traffic to it leaves by) */
  int rc = host && *host ? iface_of_name(ifs, host, 0, name, cap) : -1;
  if (rc < 0 && ssh_server_addr(sv, sizeof sv) == 0)
    rc = iface_of_name(ifs, sv, 0, name, cap);
  if (rc < 0 && host && *host)
    rc = iface_of_name(ifs, host, 1, name, cap);
  freeifaddrs(ifs);
  if (rc < 0)
    return pit_err_set(e, PIT_ENOTFOUND, "no network interface of this host other than loopback holds '%s'",
                       host && *host ? host : "(no address)");
  return 0;
}
