using System;
using System.Buffers.Binary;
using System.Collections.Generic;
using System.Net;
using System.Numerics;
using System.Text;
using Falconet.Transport.Proxy;
using Shouldly;
using Xunit;
using static Falconet.Http.Tests.Proxy.ProxyHeaders;

namespace Falconet.Http.Tests.Proxy;

/// <summary>The PROXY header parser on its own: versions 1 and 2 as HAProxy's spec writes them, every malformed shape, and bounded fuzzing.</summary>
public sealed class ProxyHeaderParserTests
{
    private const int Limit = 4096;

    [Theory]
    [InlineData("PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\r\n", "192.0.2.1", 56324, "198.51.100.2", 443)]
    [InlineData("PROXY TCP6 2001:db8::1 2001:db8::2 1 65535\r\n", "2001:db8::1", 1, "2001:db8::2", 65535)]
    [InlineData("PROXY TCP6 ::ffff:192.0.2.1 ::1 0 80\r\n", "::ffff:192.0.2.1", 0, "::1", 80)]
    [InlineData("PROXY TCP4 255.255.255.255 255.255.255.255 65535 65535\r\n", "255.255.255.255", 65535, "255.255.255.255", 65535)]
    public void A_version_1_line_gives_both_addresses_and_ports(string line, string source, int sourcePort, string destination, int destinationPort)
    {
        byte[] bytes = Encoding.ASCII.GetBytes(line + "GET / HTTP/1.1\r\n");
        ProxyHeaderParser.TryParse(bytes, Limit, out ProxyHeader header, out string? reason).ShouldBe(ProxyParseStatus.Complete, reason);
        header.Version.ShouldBe((byte)1);
        header.Length.ShouldBe(line.Length);
        header.Command.ShouldBe(ProxyCommand.Proxy);
        header.Source.ToIPAddress(header.Family).ShouldBe(IPAddress.Parse(source));
        header.Destination.ToIPAddress(header.Family).ShouldBe(IPAddress.Parse(destination));
        ((int)header.SourcePort).ShouldBe(sourcePort);
        ((int)header.DestinationPort).ShouldBe(destinationPort);
    }

    [Theory]
    [InlineData("PROXY UNKNOWN\r\n")]
    [InlineData("PROXY UNKNOWN ffff:f...f:ffff ffff:f...f:ffff 65535 65535\r\n")]
    public void A_version_1_UNKNOWN_line_keeps_the_connections_own_endpoints(string line)
    {
        ProxyHeaderParser.TryParse(Encoding.ASCII.GetBytes(line), Limit, out ProxyHeader header, out _).ShouldBe(ProxyParseStatus.Complete);
        header.Family.ShouldBe(ProxyAddressFamily.Unspecified);
        header.HasAddresses.ShouldBeFalse();
    }

    [Theory]
    [InlineData("PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\n")]
    [InlineData("PROXY TCP4 192.0.2.1  198.51.100.2 56324 443\r\n")]
    [InlineData("PROXY TCP4 192.0.2.1 198.51.100.2 56324 443 \r\n")]
    [InlineData("PROXY TCP4 192.0.2.1 198.51.100.2 56324\r\n")]
    [InlineData("PROXY TCP4 192.0.2.1 198.51.100.2 56324 443 1\r\n")]
    [InlineData("PROXY TCP4 192.0.2 198.51.100.2 56324 443\r\n")]
    [InlineData("PROXY TCP4 192.0.2.01 198.51.100.2 56324 443\r\n")]
    [InlineData("PROXY TCP4 192.0.2.256 198.51.100.2 56324 443\r\n")]
    [InlineData("PROXY TCP4 2001:db8::1 198.51.100.2 56324 443\r\n")]
    [InlineData("PROXY TCP6 192.0.2.1 2001:db8::2 56324 443\r\n")]
    [InlineData("PROXY TCP6 fe80::1%eth0 2001:db8::2 56324 443\r\n")]
    [InlineData("PROXY TCP4 192.0.2.1 198.51.100.2 65536 443\r\n")]
    [InlineData("PROXY TCP4 192.0.2.1 198.51.100.2 056324 443\r\n")]
    [InlineData("PROXY TCP4 192.0.2.1 198.51.100.2 -1 443\r\n")]
    [InlineData("PROXY UDP4 192.0.2.1 198.51.100.2 56324 443\r\n")]
    [InlineData("PROXY tcp4 192.0.2.1 198.51.100.2 56324 443\r\n")]
    [InlineData("PROXY UNKNOWNX\r\n")]
    [InlineData("PROXY \r\n")]
    public void A_malformed_version_1_line_is_refused(string line) =>
        ProxyHeaderParser.TryParse(Encoding.ASCII.GetBytes(line), Limit, out _, out string? reason).ShouldBe(ProxyParseStatus.Invalid, $"{reason}");

    [Theory]
    [InlineData("GET / HTTP/1.1\r\n", "proxy_header_missing")]
    [InlineData("\x16\x03\x01\x02\x00", "proxy_header_missing")]
    [InlineData("PROXZ TCP4", "proxy_header_missing")]
    public void Bytes_that_start_no_PROXY_signature_are_refused_at_once(string start, string expected)
    {
        ProxyHeaderParser.TryParse(Encoding.Latin1.GetBytes(start), Limit, out _, out string? reason).ShouldBe(ProxyParseStatus.Invalid);
        reason.ShouldBe(expected);
    }

    [Fact]
    public void A_version_1_line_without_its_end_within_107_bytes_is_refused_as_too_large()
    {
        byte[] bytes = Encoding.ASCII.GetBytes("PROXY UNKNOWN " + new string('a', 100));
        ProxyHeaderParser.TryParse(bytes, Limit, out _, out string? reason).ShouldBe(ProxyParseStatus.Invalid);
        reason.ShouldBe(ProxyRejections.TooLarge);
    }

    [Fact]
    public void A_control_byte_in_an_unfinished_version_1_line_is_refused_before_the_line_ends()
    {
        ProxyHeaderParser.TryParse("PROXY TCP4 1\0"u8, Limit, out _, out _).ShouldBe(ProxyParseStatus.Invalid);
        ProxyHeaderParser.TryParse("PROXY TCP4 1.2.3.4 5.6.7.8 1 2\r"u8, Limit, out _, out _).ShouldBe(ProxyParseStatus.NeedMore);
    }

    [Fact]
    public void A_version_2_header_gives_IPv4_addresses_ports_and_its_TLVs()
    {
        byte[] tlvs = [.. Tlv(ProxyTlvs.Alpn, "h2"u8), .. Tlv(ProxyTlvs.Authority, "example.com"u8), .. Tlv(ProxyTlvs.UniqueId, [1, 2, 3])];
        byte[] bytes = [.. V2(0x21, 0x11, [.. IPv4("203.0.113.7", "10.0.0.1"), .. Ports(51234, 8443)], tlvs), .. "GET"u8];
        ProxyHeaderParser.TryParse(bytes, Limit, out ProxyHeader header, out string? reason).ShouldBe(ProxyParseStatus.Complete, reason);
        header.Version.ShouldBe((byte)2);
        header.Length.ShouldBe(bytes.Length - 3);
        header.Source.ToIPAddress(header.Family).ShouldBe(IPAddress.Parse("203.0.113.7"));
        header.SourcePort.ShouldBe((ushort)51234);
        header.DestinationPort.ShouldBe((ushort)8443);
        var info = new ProxyProtocolInfo(2, header.Command, header.Family, null, null, bytes.AsSpan(header.TlvOffset, header.TlvLength).ToArray());
        Encoding.ASCII.GetString(info.ApplicationProtocol.Span).ShouldBe("h2");
        info.Authority.ShouldBe("example.com");
        info.UniqueId.ToArray().ShouldBe(new byte[] { 1, 2, 3 });
        info.Ssl.ShouldBeNull();
    }

    [Fact]
    public void A_version_2_header_gives_IPv6_addresses_and_the_SSL_TLV_with_its_sub_fields()
    {
        byte[] ssl = [0x07, 0, 0, 0, 0, .. Tlv(ProxyTlvs.SslVersion, "TLSv1.3"u8), .. Tlv(ProxyTlvs.SslCommonName, "client"u8), .. Tlv(ProxyTlvs.SslCipher, "TLS_AES_128_GCM_SHA256"u8)];
        byte[] bytes = V2(0x21, 0x21, [.. IPAddress.Parse("2001:db8::7").GetAddressBytes(), .. IPAddress.Parse("2001:db8::1").GetAddressBytes(), .. Ports(1, 2)], Tlv(ProxyTlvs.Ssl, ssl));
        ProxyHeaderParser.TryParse(bytes, Limit, out ProxyHeader header, out string? reason).ShouldBe(ProxyParseStatus.Complete, reason);
        header.Source.ToIPAddress(header.Family).ShouldBe(IPAddress.Parse("2001:db8::7"));
        var info = new ProxyProtocolInfo(2, header.Command, header.Family, null, null, bytes.AsSpan(header.TlvOffset, header.TlvLength).ToArray());
        ProxySslInfo tls = info.Ssl.ShouldNotBeNull();
        tls.IsTls.ShouldBeTrue();
        tls.ClientCertificateOnConnection.ShouldBeTrue();
        tls.CertificateVerified.ShouldBeTrue();
        tls.Version.ShouldBe("TLSv1.3");
        tls.CommonName.ShouldBe("client");
        tls.Cipher.ShouldBe("TLS_AES_128_GCM_SHA256");
        tls.KeyAlgorithm.ShouldBeNull();
    }

    [Fact]
    public void A_version_2_LOCAL_command_keeps_the_connections_endpoints_and_skips_its_block()
    {
        byte[] bytes = V2(0x20, 0x11, [.. IPv4("1.2.3.4", "5.6.7.8"), .. Ports(1, 2)], Tlv(0xEE, [9]));
        ProxyHeaderParser.TryParse(bytes, Limit, out ProxyHeader header, out _).ShouldBe(ProxyParseStatus.Complete);
        header.Command.ShouldBe(ProxyCommand.Local);
        header.HasAddresses.ShouldBeFalse();
        header.Length.ShouldBe(bytes.Length);
    }

    [Fact]
    public void A_version_2_UNSPEC_or_UNIX_family_keeps_the_connections_endpoints()
    {
        ProxyHeaderParser.TryParse(V2(0x21, 0x00, [], []), Limit, out ProxyHeader unspecified, out _).ShouldBe(ProxyParseStatus.Complete);
        unspecified.HasAddresses.ShouldBeFalse();
        ProxyHeaderParser.TryParse(V2(0x21, 0x31, new byte[216], []), Limit, out ProxyHeader unix, out _).ShouldBe(ProxyParseStatus.Complete);
        unix.Family.ShouldBe(ProxyAddressFamily.Unix);
        unix.HasAddresses.ShouldBeFalse();
    }

    [Fact]
    public void A_version_2_CRC32C_TLV_is_checked()
    {
        byte[] good = WithChecksum(V2(0x21, 0x11, [.. IPv4("1.2.3.4", "5.6.7.8"), .. Ports(1, 2)], Tlv(ProxyTlvs.Crc32c, new byte[4])));
        ProxyHeaderParser.TryParse(good, Limit, out _, out string? reason).ShouldBe(ProxyParseStatus.Complete, reason);
        good[20] ^= 1;
        ProxyHeaderParser.TryParse(good, Limit, out _, out reason).ShouldBe(ProxyParseStatus.Invalid);
        reason.ShouldBe(ProxyRejections.BadChecksum);
    }

    public static IEnumerable<object[]> MalformedVersion2()
    {
        byte[] addresses = [.. IPv4("1.2.3.4", "5.6.7.8"), .. Ports(1, 2)];
        yield return ["version 1 in a v2 signature", V2(0x11, 0x11, addresses, []), ProxyRejections.UnsupportedVersion];
        yield return ["command 2", V2(0x22, 0x11, addresses, []), ProxyRejections.Malformed];
        yield return ["family 4", V2(0x21, 0x41, addresses, []), ProxyRejections.Malformed];
        yield return ["transport 3", V2(0x21, 0x13, addresses, []), ProxyRejections.Malformed];
        yield return ["INET without a transport", V2(0x21, 0x10, addresses, []), ProxyRejections.Malformed];
        yield return ["INET6 with an INET block", V2(0x21, 0x21, addresses, []), ProxyRejections.Malformed];
        yield return ["a TLV running past the block", V2(0x21, 0x11, addresses, [0x01, 0x00, 0x09, (byte)'h']), ProxyRejections.Malformed];
        yield return ["a TLV cut in its head", V2(0x21, 0x11, addresses, [0x01, 0x00]), ProxyRejections.Malformed];
        yield return ["an empty ALPN", V2(0x21, 0x11, addresses, Tlv(ProxyTlvs.Alpn, [])), ProxyRejections.Malformed];
        yield return ["a unique id past 128 bytes", V2(0x21, 0x11, addresses, Tlv(ProxyTlvs.UniqueId, new byte[129])), ProxyRejections.Malformed];
        yield return ["an SSL TLV shorter than its fixed part", V2(0x21, 0x11, addresses, Tlv(ProxyTlvs.Ssl, [1, 0, 0])), ProxyRejections.Malformed];
        yield return ["an SSL sub-TLV running past it", V2(0x21, 0x11, addresses, Tlv(ProxyTlvs.Ssl, [1, 0, 0, 0, 0, 0x21, 0, 5, (byte)'T'])), ProxyRejections.Malformed];
        yield return ["a CRC32C of 3 bytes", V2(0x21, 0x11, addresses, Tlv(ProxyTlvs.Crc32c, [0, 0, 0])), ProxyRejections.Malformed];
        yield return ["two CRC32Cs", V2(0x21, 0x11, addresses, [.. Tlv(ProxyTlvs.Crc32c, new byte[4]), .. Tlv(ProxyTlvs.Crc32c, new byte[4])]), ProxyRejections.Malformed];
    }

    [Theory]
    [MemberData(nameof(MalformedVersion2))]
    public void A_malformed_version_2_header_is_refused_with_its_reason(string what, byte[] bytes, string expected)
    {
        ProxyHeaderParser.TryParse(bytes, Limit, out _, out string? reason).ShouldBe(ProxyParseStatus.Invalid, what);
        reason.ShouldBe(expected, what);
    }

    [Fact]
    public void A_version_2_header_over_the_limit_is_refused_as_soon_as_its_length_is_read()
    {
        byte[] head = V2(0x21, 0x11, [.. IPv4("1.2.3.4", "5.6.7.8"), .. Ports(1, 2)], Tlv(0xE0, new byte[400]))[..16];
        ProxyHeaderParser.TryParse(head, 256, out _, out string? reason).ShouldBe(ProxyParseStatus.Invalid);
        reason.ShouldBe(ProxyRejections.TooLarge);
    }

    [Fact]
    public void Every_prefix_of_a_valid_header_needs_more_bytes_and_never_fails()
    {
        byte[][] headers =
        [
            "PROXY TCP6 2001:db8::1 2001:db8::2 1 65535\r\n"u8.ToArray(),
            V2(0x21, 0x11, [.. IPv4("1.2.3.4", "5.6.7.8"), .. Ports(1, 2)], [.. Tlv(ProxyTlvs.Alpn, "h2"u8), .. Tlv(ProxyTlvs.Ssl, [1, 0, 0, 0, 0])]),
        ];
        foreach (byte[] header in headers)
        {
            for (int length = 0; length < header.Length; length++)
            {
                ProxyHeaderParser.TryParse(header.AsSpan(0, length), Limit, out _, out string? reason).ShouldBe(ProxyParseStatus.NeedMore, $"prefix of {length}: {reason}");
            }

            ProxyHeaderParser.TryParse(header, Limit, out ProxyHeader parsed, out _).ShouldBe(ProxyParseStatus.Complete);
            parsed.Length.ShouldBe(header.Length);
        }
    }

    [Fact]
    public void Mutated_headers_never_throw_and_a_complete_one_lies_within_the_bytes()
    {
        // Bounded fuzzing with a fixed seed: 60,000 mutations of valid headers (flipped, inserted, removed and cut bytes).
        var random = new Random(20261125);
        byte[][] seeds =
        [
            "PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\r\n"u8.ToArray(),
            "PROXY TCP6 2001:db8::1 ::1 1 2\r\n"u8.ToArray(),
            "PROXY UNKNOWN\r\n"u8.ToArray(),
            V2(0x21, 0x11, [.. IPv4("1.2.3.4", "5.6.7.8"), .. Ports(1, 2)], [.. Tlv(ProxyTlvs.Alpn, "h2"u8), .. Tlv(ProxyTlvs.Ssl, [1, 0, 0, 0, 0, .. Tlv(ProxyTlvs.SslVersion, "TLSv1.2"u8)])]),
            WithChecksum(V2(0x21, 0x21, new byte[36], Tlv(ProxyTlvs.Crc32c, new byte[4]))),
            V2(0x20, 0x00, [], []),
        ];
        for (int i = 0; i < 60_000; i++)
        {
            var bytes = new List<byte>(seeds[random.Next(seeds.Length)]);
            for (int edits = random.Next(1, 4); edits > 0 && bytes.Count > 0; edits--)
            {
                int at = random.Next(bytes.Count);
                switch (random.Next(4))
                {
                    case 0: bytes[at] ^= (byte)(1 << random.Next(8)); break;
                    case 1: bytes.Insert(at, (byte)random.Next(256)); break;
                    case 2: bytes.RemoveAt(at); break;
                    default: bytes.RemoveRange(at, bytes.Count - at); break;
                }
            }

            byte[] input = bytes.ToArray();
            ProxyParseStatus status = ProxyHeaderParser.TryParse(input, 512, out ProxyHeader header, out string? reason);
            switch (status)
            {
                case ProxyParseStatus.Complete:
                    header.Length.ShouldBeInRange(1, input.Length);
                    (header.TlvOffset + header.TlvLength).ShouldBeLessThanOrEqualTo(header.Length);
                    break;
                case ProxyParseStatus.Invalid:
                    reason.ShouldNotBeNull();
                    break;
                default:
                    input.Length.ShouldBeLessThan(512 + 16);
                    break;
            }
        }
    }

    private static byte[] IPv4(string source, string destination) => [.. IPAddress.Parse(source).GetAddressBytes(), .. IPAddress.Parse(destination).GetAddressBytes()];

    /// <summary>Fills the CRC32C TLV (the last 4 bytes) with the checksum of the header.</summary>
    private static byte[] WithChecksum(byte[] header)
    {
        uint crc = uint.MaxValue;
        foreach (byte value in header)
        {
            crc = BitOperations.Crc32C(crc, value);
        }

        BinaryPrimitives.WriteUInt32BigEndian(header.AsSpan(header.Length - 4), ~crc);
        return header;
    }
}
