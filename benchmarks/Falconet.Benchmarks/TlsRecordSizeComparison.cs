using System;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using System.Threading;
using System.Threading.Tasks;

namespace Falconet.Benchmarks;

/// <summary>
/// Why the TLS layer stages a batch of 4 KiB pool blocks into full-size records: SslStream encrypting a 64 KiB body as
/// one record per block, against copying the blocks into 16,320-byte records first. The records go to a sink after a
/// real handshake, so only encryption is measured; the two run in alternating rounds in one process, so load from
/// other processes lands on both alike. Prints the fastest and the median round of each and their ratio.
/// </summary>
public static class TlsRecordSizeComparison
{
    private const int Block = 4096;
    private const int StagedRecord = 16_320;

    /// <summary>Runs the comparison and prints one line per figure.</summary>
    public static void Run(int rounds = 40, int bodiesPerRound = 200)
    {
        using SslStream server = Handshake(out DiscardAfterHandshake sink);
        sink.Discard = true;
        Console.WriteLine($"{server.SslProtocol} {server.NegotiatedCipherSuite}");

        byte[] body = new byte[64 * 1024];
        new Random(1).NextBytes(body);
        byte[] staging = new byte[StagedRecord];
        var perBlock = new double[rounds];
        var staged = new double[rounds];
        PerBlock(server, body, 50);
        Staged(server, body, staging, 50);
        for (int round = 0; round < rounds; round++)
        {
            perBlock[round] = PerBlock(server, body, bodiesPerRound);
            staged[round] = Staged(server, body, staging, bodiesPerRound);
        }

        double bytes = (double)body.Length * bodiesPerRound;
        Array.Sort(perBlock);
        Array.Sort(staged);
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"one record per 4 KiB block: fastest {bytes / perBlock[0] / 1e9:F2} GB/s, median {bytes / perBlock[rounds / 2] / 1e9:F2} GB/s"));
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"staged 16,320-byte records: fastest {bytes / staged[0] / 1e9:F2} GB/s, median {bytes / staged[rounds / 2] / 1e9:F2} GB/s"));
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"staged / per block: fastest {perBlock[0] / staged[0]:F2}x, median {perBlock[rounds / 2] / staged[rounds / 2]:F2}x"));
    }

    private static double PerBlock(SslStream server, byte[] body, int bodies)
    {
        long start = Stopwatch.GetTimestamp();
        for (int i = 0; i < bodies; i++)
        {
            for (int offset = 0; offset < body.Length; offset += Block)
            {
                server.Write(body, offset, Block);
            }
        }

        return Stopwatch.GetElapsedTime(start).TotalSeconds;
    }

    private static double Staged(SslStream server, byte[] body, byte[] staging, int bodies)
    {
        long start = Stopwatch.GetTimestamp();
        for (int i = 0; i < bodies; i++)
        {
            int filled = 0;
            for (int offset = 0; offset < body.Length; offset += Block)
            {
                // Block by block, as the layer copies pool blocks.
                int left = Block;
                while (left > 0)
                {
                    int take = Math.Min(left, staging.Length - filled);
                    Buffer.BlockCopy(body, offset + Block - left, staging, filled, take);
                    filled += take;
                    left -= take;
                    if (filled == staging.Length)
                    {
                        server.Write(staging, 0, filled);
                        filled = 0;
                    }
                }
            }

            if (filled > 0)
            {
                server.Write(staging, 0, filled);
            }
        }

        return Stopwatch.GetElapsedTime(start).TotalSeconds;
    }

    private static SslStream Handshake(out DiscardAfterHandshake sink)
    {
        using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var request = new CertificateRequest("CN=localhost", key, HashAlgorithmName.SHA256);
        using X509Certificate2 certificate = request.CreateSelfSigned(DateTimeOffset.UtcNow.AddDays(-1), DateTimeOffset.UtcNow.AddDays(1));
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        using var client = new TcpClient();
        client.Connect((IPEndPoint)listener.LocalEndpoint);
        TcpClient accepted = listener.AcceptTcpClient();
        sink = new DiscardAfterHandshake(accepted.GetStream());
        var server = new SslStream(sink);
        using var clientTls = new SslStream(client.GetStream(), false, (_, _, _, _) => true);
        Task.WaitAll(
            server.AuthenticateAsServerAsync(certificate),
            clientTls.AuthenticateAsClientAsync("localhost"));
        return server;
    }

    /// <summary>Carries the handshake, then drops every write: the records are produced but never sent.</summary>
    private sealed class DiscardAfterHandshake(Stream inner) : Stream
    {
        public bool Discard { get; set; }

        public override bool CanRead => true;

        public override bool CanWrite => true;

        public override bool CanSeek => false;

        public override long Length => throw new NotSupportedException();

        public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }

        public override void Flush()
        {
            if (!Discard)
            {
                inner.Flush();
            }
        }

        public override Task FlushAsync(CancellationToken cancellationToken) => Discard ? Task.CompletedTask : inner.FlushAsync(cancellationToken);

        public override int Read(byte[] buffer, int offset, int count) => inner.Read(buffer, offset, count);

        public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default) => inner.ReadAsync(buffer, cancellationToken);

        public override void Write(byte[] buffer, int offset, int count)
        {
            if (!Discard)
            {
                inner.Write(buffer, offset, count);
            }
        }

        public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default) =>
            Discard ? default : inner.WriteAsync(buffer, cancellationToken);

        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

        public override void SetLength(long value) => throw new NotSupportedException();
    }
}
