using System;
using System.Collections.Generic;
using System.IO;
using System.Net.Security;
using System.Security.Authentication;
using System.Threading;
using System.Threading.Tasks;

namespace Falconet.Fuzz;

/// <summary>
/// The seed corpus of <see cref="TlsFuzzTarget"/>: real ClientHellos (from `openssl s_client` and from an SslStream client,
/// TLS 1.2 and 1.3, with and without SNI and ALPN) for the raw mode, and handshake runs with every corruption.
/// </summary>
public static class TlsFuzzSeeds
{
    // Captured from OpenSSL 3.0's s_client: -tls1_3 -servername localhost -alpn h2,http/1.1; -tls1_2 -servername localhost
    // -alpn http/1.1; -servername example.com (1.2 and 1.3 offered); -tls1_2 -noservername -cipher ECDHE-RSA-AES128-GCM-SHA256.
    private static readonly (string Name, string Base64)[] s_openSslHellos =
    [
        ("openssl-tls13-sni-alpn", "FgMBAQABAAD8AwPQ0jZdKl1I7htERC2XbD2xZTL04/08F9dHGbQJpaoh3iCXE3VWlZh9eX9ulg3bgsuntSjl/aQjUyXYjs8OED4ftQAIEwITAxMBAP8BAACrAAAADgAMAAAJbG9jYWxob3N0AAsABAMAAQIACgAWABQAHQAXAB4AGQAYAQABAQECAQMBBAAjAAAAEAAOAAwCaDIIaHR0cC8xLjEAFgAAABcAAAANAB4AHAQDBQMGAwgHCAgICQgKCAsIBAgFCAYEAQUBBgEAKwADAgMEAC0AAgEBADMAJgAkAB0AIAIHv6aFUypbNeSzrdb/Z/jTJOcyK8jl8neAeb2sOshN"),
        ("openssl-tls12-sni-alpn", "FgMBANgBAADUAwMA5IkehPuw2ehsQd8RV18fv0AorsdYJV8H871C1HLgxwAAOMAswDAAn8ypzKjMqsArwC8AnsAkwCgAa8AjwCcAZ8AKwBQAOcAJwBMAMwCdAJwAPQA8ADUALwD/AQAAcwAAAA4ADAAACWxvY2FsaG9zdAALAAQDAAECAAoADAAKAB0AFwAeABkAGAAjAAAAEAALAAkIaHR0cC8xLjEAFgAAABcAAAANACoAKAQDBQMGAwgHCAgICQgKCAsIBAgFCAYEAQUBBgEDAwMBAwIEAgUCBgI="),
        ("openssl-both-sni", "FgMBATgBAAE0AwP7se2Bvfr73BmDuz+bexXqovS+QDqe2NdGm44GxSnfriBFVdiaDfiUS6FrwmXJ+kuho8+CBCeV3z1b2DlMH36+8wA+EwITAxMBwCzAMACfzKnMqMyqwCvALwCewCTAKABrwCPAJwBnwArAFAA5wAnAEwAzAJ0AnAA9ADwANQAvAP8BAACtAAAAEAAOAAALZXhhbXBsZS5jb20ACwAEAwABAgAKABYAFAAdABcAHgAZABgBAAEBAQIBAwEEACMAAAAWAAAAFwAAAA0AKgAoBAMFAwYDCAcICAgJCAoICwgECAUIBgQBBQEGAQMDAwEDAgQCBQIGAgArAAkIAwQDAwMCAwEALQACAQEAMwAmACQAHQAgwvyqXC2QQzJxty3G3h6j8YgtKSQS0E9M4aKLW53HHyE="),
        ("openssl-tls12-no-sni", "FgMBAIMBAAB/AwMi4T2OVpnU/DAN4WGRyf72z3nIkkR6I2pOARXTK6ORzAAABMAvAP8BAABSAAsABAMAAQIACgAMAAoAHQAXAB4AGQAYACMAAAAWAAAAFwAAAA0AKgAoBAMFAwYDCAcICAgJCAoICwgECAUIBgQBBQEGAQMDAwEDAgQCBQIGAg=="),
    ];

    /// <summary>The seeds, by a stable file-safe name.</summary>
    public static IReadOnlyList<(string Name, byte[] Bytes)> All { get; } = Build();

    private static List<(string, byte[])> Build()
    {
        var hellos = new List<(string Name, byte[] Bytes)>();
        foreach ((string name, string base64) in s_openSslHellos)
        {
            hellos.Add((name, Convert.FromBase64String(base64)));
        }

        hellos.Add(("sslstream-tls13-sni-alpn", CaptureClientHello(SslProtocols.Tls13, "localhost", [SslApplicationProtocol.Http2, SslApplicationProtocol.Http11])));
        hellos.Add(("sslstream-tls12-sni", CaptureClientHello(SslProtocols.Tls12, "localhost", null)));
        hellos.Add(("sslstream-both-no-sni-alpn", CaptureClientHello(SslProtocols.Tls12 | SslProtocols.Tls13, "127.0.0.1", [SslApplicationProtocol.Http11])));

        var seeds = new List<(string, byte[])>();
        foreach ((string name, byte[] hello) in hellos)
        {
            seeds.Add(($"raw-{name}", [0, .. hello]));
            seeds.Add(($"raw-split-{name}", [2, .. hello]));
        }

        seeds.Add(("raw-hello-then-alert", [0, .. hellos[0].Bytes, 21, 3, 3, 0, 2, 2, 40]));
        seeds.Add(("raw-http-request", [0, .. "GET / HTTP/1.1\r\nHost: x\r\n\r\n"u8]));

        // Handshake runs: flags (bit 0 TLS 1.3, bits 1-2 requests, bit 3 one write each, bits 4-6 corruption), offset, detail, pieces.
        seeds.Add(("handshake-tls13-whole", [1, 0b0000_0001]));
        seeds.Add(("handshake-tls12-whole", [1, 0b0000_0100]));
        seeds.Add(("handshake-tls13-three-writes-one-byte-pieces", [1, 0b0000_1101, 0, 0, 0, 0x80]));
        seeds.Add(("handshake-tls12-two-writes-small-pieces", [1, 0b0000_1010, 0, 0, 0, 0x83, 5, 0x81, 0x82, 17]));
        seeds.Add(("handshake-tls13-flip-late", [1, 0b0001_1101, 0x80, 0x07, 3, 0x80]));
        seeds.Add(("handshake-tls12-flip-early", [1, 0b0001_0100, 0x20, 0, 5]));
        seeds.Add(("handshake-tls13-truncate", [1, 0b0010_1011, 0x40, 0x06, 0, 3, 0x81]));
        seeds.Add(("handshake-tls12-truncate", [1, 0b0010_0010, 0x00, 0x02, 0]));
        seeds.Add(("handshake-tls13-duplicate", [1, 0b0011_1101, 0x60, 0x06, 0, 0x82, 9]));
        seeds.Add(("handshake-tls12-duplicate", [1, 0b0011_0100, 0x00, 0x03, 0]));
        seeds.Add(("handshake-tls13-garbage", [1, 0b0100_1011, 0xC0, 0x05, 1, 0x80, 0x83]));
        seeds.Add(("handshake-tls12-garbage", [1, 0b0100_0100, 0x10, 0x00, 5]));
        return seeds;
    }

    /// <summary>The first flight of an SslStream client with these settings (its handshake then fails: nothing answers).</summary>
    private static byte[] CaptureClientHello(SslProtocols protocols, string targetHost, List<SslApplicationProtocol>? alpn)
    {
        var capture = new CaptureStream();
        using var client = new SslStream(capture);
        try
        {
            client.AuthenticateAsClient(new SslClientAuthenticationOptions
            {
                TargetHost = targetHost,
                EnabledSslProtocols = protocols,
                ApplicationProtocols = alpn,
            });
        }
        catch (Exception exception) when (exception is IOException or AuthenticationException)
        {
        }

        return capture.Written.ToArray();
    }

    /// <summary>Keeps what is written; every read is the end of the stream.</summary>
    private sealed class CaptureStream : Stream
    {
        public MemoryStream Written { get; } = new();

        public override bool CanRead => true;

        public override bool CanSeek => false;

        public override bool CanWrite => true;

        public override long Length => throw new NotSupportedException();

        public override long Position
        {
            get => throw new NotSupportedException();
            set => throw new NotSupportedException();
        }

        public override int Read(byte[] buffer, int offset, int count) => 0;

        public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) => Task.FromResult(0);

        public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default) => new(0);

        public override void Write(byte[] buffer, int offset, int count) => Written.Write(buffer, offset, count);

        public override void Flush()
        {
        }

        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

        public override void SetLength(long value) => throw new NotSupportedException();
    }
}
