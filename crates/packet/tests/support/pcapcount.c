/* For each capture named on the command line, what libpcap reads from it:
 *   FILE <TAB> PACKETS <TAB> DIGEST <TAB> LINKTYPE <TAB> ok | open: MESSAGE | MESSAGE
 * DIGEST is FNV-1a (64 bits) over every packet's time (seconds modulo 2^32 and
 * microseconds, 4 bytes each, after carrying whole seconds out of the microseconds),
 * captured length (4), original length (4) and bytes, little-endian, in order.
 * Built by tests/libpcap_counts.rs against libpcap-dev. */
#include <pcap/pcap.h>
#include <stdint.h>
#include <stdio.h>

static uint64_t fnv(uint64_t h, const unsigned char *p, size_t n) {
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

static uint64_t fnv_le(uint64_t h, uint64_t v, int bytes) {
    unsigned char b[8];
    for (int i = 0; i < bytes; i++) b[i] = (unsigned char)(v >> (8 * i));
    return fnv(h, b, (size_t)bytes);
}

int main(int argc, char **argv) {
    char err[PCAP_ERRBUF_SIZE];
    for (int i = 1; i < argc; i++) {
        pcap_t *p = pcap_open_offline(argv[i], err);
        if (!p) {
            printf("%s\t0\t%016llx\t-1\topen: %s\n", argv[i], 0xcbf29ce484222325ULL, err);
            continue;
        }
        struct pcap_pkthdr *h;
        const u_char *d;
        long n = 0;
        int r;
        uint64_t digest = 0xcbf29ce484222325ULL;
        while ((r = pcap_next_ex(p, &h, &d)) == 1) {
            n++;
            uint64_t usec = (uint64_t)(uint32_t)h->ts.tv_sec * 1000000 + (uint32_t)h->ts.tv_usec;
            digest = fnv_le(digest, usec / 1000000, 4);
            digest = fnv_le(digest, usec % 1000000, 4);
            digest = fnv_le(digest, h->caplen, 4);
            digest = fnv_le(digest, h->len, 4);
            digest = fnv(digest, d, h->caplen);
        }
        printf("%s\t%ld\t%016llx\t%d\t%s\n", argv[i], n, (unsigned long long)digest,
               pcap_datalink(p), r == -1 ? pcap_geterr(p) : "ok");
        pcap_close(p);
    }
    return 0;
}
