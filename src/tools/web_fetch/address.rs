//! Which addresses `web_fetch` may connect to: the public internet only.
//! Invariant: an IPv6 address that carries an IPv4 address for a
//! translator or tunnel to reach (NAT64, 6to4, Teredo, IPv4-mapped,
//! -compatible or -translated) is judged by every IPv4 address inside it,
//! so `64:ff9b::7f00:1` is refused like `127.0.0.1`.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Whether `ip` is an address of the public internet.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(v4: Ipv4Addr) -> bool {
    let [a, b, ..] = v4.octets();
    !(v4.is_loopback()
        || v4.is_private()
        || v4.is_link_local()
        || v4.is_unspecified()
        || v4.is_broadcast()
        || v4.is_multicast()
        || v4.is_documentation()
        || a == 0
        || (a == 100 && (64..128).contains(&b))
        || (a == 198 && (b == 18 || b == 19))
        || a >= 240)
}

fn is_public_v6(v6: Ipv6Addr) -> bool {
    let s = v6.segments();
    if v6.is_loopback() || v6.is_unspecified() || v6.is_multicast() {
        return false;
    }
    // The local-use NAT64 prefix (RFC 8215) is not globally reachable,
    // and where its IPv4 sits depends on the operator's prefix length:
    // refused whatever it holds.
    if s[0] == 0x64 && s[1] == 0xff9b && s[2] == 1 {
        return false;
    }
    let inner = embedded_v4(s);
    if !inner.is_empty() {
        return inner.into_iter().all(is_public_v4);
    }
    !((s[0] & 0xfe00) == 0xfc00 // unique local
        || (s[0] & 0xffc0) == 0xfe80 // link-local
        || (s[0] & 0xffc0) == 0xfec0 // site-local (deprecated)
        || (s[0] == 0x2001 && s[1] == 0x0db8) // documentation
        || (s[0] == 0x0100 && s[1..4] == [0, 0, 0])) // discard
}

/// The IPv4 addresses an IPv6 address carries for a translator or a
/// tunnel; empty for a plain IPv6 address.
fn embedded_v4(s: [u16; 8]) -> Vec<Ipv4Addr> {
    let v4 = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    match s {
        // IPv4-compatible (`::a.b.c.d`), -mapped (`::ffff:a.b.c.d`) and
        // -translated (`::ffff:0:a.b.c.d`).
        [0, 0, 0, 0, 0, 0 | 0xffff, hi, lo] | [0, 0, 0, 0, 0xffff, 0, hi, lo] => vec![v4(hi, lo)],
        // NAT64's well-known prefix, `64:ff9b::/96`.
        [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => vec![v4(hi, lo)],
        // 6to4, `2002:AABB:CCDD::/48`.
        [0x2002, hi, lo, ..] => vec![v4(hi, lo)],
        // Teredo, `2001:0::/32`: the server, then the client inverted.
        [0x2001, 0, shi, slo, _, _, chi, clo] => vec![v4(shi, slo), v4(!chi, !clo)],
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_public_addresses_pass() {
        for private in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "224.0.0.1",
            "::1",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::",
        ] {
            assert!(!is_public(private.parse().unwrap()), "{private}");
        }
        for public in ["93.184.216.34", "1.1.1.1", "2606:4700:4700::1111"] {
            assert!(is_public(public.parse().unwrap()), "{public}");
        }
    }

    /// Every IPv6 form that carries an IPv4 address, with `v4` in it.
    fn embeddings(v4: std::net::Ipv4Addr) -> Vec<(&'static str, IpAddr)> {
        let n = u32::from(v4);
        let (hi, lo) = ((n >> 16) as u16, n as u16);
        let v6 = |s: [u16; 8]| IpAddr::V6(std::net::Ipv6Addr::from(s));
        vec![
            ("64:ff9b::/96", v6([0x64, 0xff9b, 0, 0, 0, 0, hi, lo])),
            ("64:ff9b:1::/48", v6([0x64, 0xff9b, 1, 0, 0, 0, hi, lo])),
            ("2002::/16 (6to4)", v6([0x2002, hi, lo, 0, 0, 0, 0, 1])),
            ("::a.b.c.d", v6([0, 0, 0, 0, 0, 0, hi, lo])),
            ("::ffff:a.b.c.d", v6([0, 0, 0, 0, 0, 0xffff, hi, lo])),
            ("::ffff:0:a.b.c.d", v6([0, 0, 0, 0, 0xffff, 0, hi, lo])),
            // Teredo: a public server (65.54.227.120), the client's
            // address inverted in the last 32 bits.
            (
                "2001::/32 (Teredo client)",
                v6([0x2001, 0, 0x4136, 0xe378, 0x8000, 0x63bf, !hi, !lo]),
            ),
            (
                "2001::/32 (Teredo server)",
                v6([0x2001, 0, hi, lo, 0x8000, 0x63bf, !0x5db8, !0xd822]),
            ),
        ]
    }

    #[test]
    fn ipv6_translation_prefixes_are_checked_by_their_ipv4() {
        for inner in [
            "127.0.0.1",
            "10.1.2.3",
            "169.254.169.254",
            "192.168.0.1",
            "0.0.0.0",
        ] {
            for (form, ip) in embeddings(inner.parse().unwrap()) {
                assert!(!is_public(ip), "{inner} in {form} ({ip}) passed");
            }
        }
        // A public address inside passes, except in the local-use NAT64
        // prefix, which is not globally reachable whatever it holds.
        for (form, ip) in embeddings("93.184.216.34".parse().unwrap()) {
            let local_use = form.starts_with("64:ff9b:1::");
            assert_eq!(is_public(ip), !local_use, "93.184.216.34 in {form} ({ip})");
        }
    }
}
