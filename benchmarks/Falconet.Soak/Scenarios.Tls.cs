using System;
using System.Diagnostics;
using System.IO;
using System.Net.Security;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;

namespace Falconet.Soak;

/// <summary>
/// The kinds only a TLS soak runs: bytes that are no ClientHello, handshakes that stop half-way, a record cut short or
/// failing its authentication after the handshake, and the two ways a client ends a connection (with and without
/// close_notify). Each knows what the server must do: close, and never answer with HTTP.
/// </summary>
internal sealed partial class Scenarios
{
    /// <summary>
    /// The server's handshake timeout (<c>TlsServerOptions.HandshakeTimeout</c>, 10 s by default, which the sample keeps),
    /// checked by its once-a-second heartbeat: a stalled handshake must be closed between this and
    /// <see cref="HandshakeWait"/>.
    /// </summary>
    private static readonly TimeSpan HandshakeTimeout = TimeSpan.FromSeconds(10);

    /// <summary>The bound on a stalled handshake's close: the timeout, the heartbeat's second, and room for a loaded machine.</summary>
    private static readonly TimeSpan HandshakeWait = TimeSpan.FromSeconds(30);

    /// <summary>
    /// How soon the server must close when the bytes themselves are wrong: well below the handshake and keep-alive timeouts,
    /// so that a server that ignored them and waited for a timer shows as unexpected.
    /// </summary>
    private static readonly TimeSpan PromptClose = TimeSpan.FromSeconds(8);

    /// <summary>Bytes sent instead of a ClientHello; each is complete enough to be refused without waiting for more.</summary>
    private static readonly (string Name, byte[] Bytes)[] NotHello =
    [
        ("plain_http", Ascii("GET /plaintext HTTP/1.1\r\nHost: soak\r\n\r\n")),
        ("noise", Noise(300, seed: 3, header: [0xFF, 0x03, 0x03, 0x01, 0x27])),
        ("junk_handshake_record", Noise(205, seed: 5, header: [0x16, 0x03, 0x01, 0x00, 0xC8])),
    ];

    /// <summary>A real ClientHello (SslStream's, http/1.1 offered), sent whole or in part by the stalled handshakes.</summary>
    private static readonly Lazy<byte[]> ClientHello = new(CaptureClientHello);

    /// <summary>Garbage instead of a ClientHello: the server must close at once, sending at most a TLS alert.</summary>
    public Task TlsGarbageAsync(int seed) => LoopAsync("tls_garbage", seed, async (random, token) =>
    {
        (string name, byte[] bytes) = NotHello[random.Next(NotHello.Length)];
        using Connection connection = await Connection.OpenAsync(endpoint, tls: false, token);
        await connection.SendAsync(bytes, token);
        var clock = Stopwatch.StartNew();
        (bool closed, byte[] received) = await ReadRawUntilClosedAsync(connection.Socket, token);
        Count("tls_garbage", name, closed && clock.Elapsed < PromptClose && OnlyAlerts(received),
            $"expected a prompt close with at most an alert, got closed={closed} after {clock.Elapsed.TotalSeconds:F1} s with {Describe(received)}");
    });

    /// <summary>
    /// A handshake that stops and is left open: nothing sent, half a ClientHello, or a whole one and no answer to the
    /// server's flight. Only the server's handshake timeout ends it; the client waits for that close.
    /// </summary>
    public Task TlsStalledHandshakeAsync(int seed) => LoopAsync("tls_stalled_handshake", seed, HandshakeWait, async (random, token) =>
    {
        using Connection connection = await Connection.OpenAsync(endpoint, tls: false, token);
        var clock = Stopwatch.StartNew();
        string kind;
        switch (random.Next(3))
        {
            case 0:
                kind = "silent";
                break;
            case 1:
                kind = "half_hello";
                await connection.SendAsync(ClientHello.Value.AsMemory(0, ClientHello.Value.Length / 2), token);
                break;
            default:
                kind = "hello_only";
                await connection.SendAsync(ClientHello.Value, token);
                break;
        }

        (bool closed, byte[] received) = await ReadRawUntilClosedAsync(connection.Socket, token);

        // The heartbeat may run a little early within its second; anything well below the timeout is a wrong close.
        bool onTime = clock.Elapsed > HandshakeTimeout - TimeSpan.FromSeconds(1.5);
        bool bytesExpected = kind == "hello_only" ? received.Length > 0 && received[0] == 0x16 : OnlyAlerts(received);
        Count("tls_stalled_handshake", kind, closed && onTime && bytesExpected,
            $"expected the handshake timeout's close after {HandshakeTimeout.TotalSeconds} s, got closed={closed} after {clock.Elapsed.TotalSeconds:F1} s with {Describe(received)}");
    });

    /// <summary>
    /// After a handshake and a request answered 200: a record cut short by the FIN, or a whole record whose authentication
    /// fails. The server must close promptly (no waiting for the keep-alive timeout).
    /// </summary>
    public Task TlsCutRecordAsync(int seed) => LoopAsync("tls_cut_record", seed, async (random, token) =>
    {
        using Connection? connection = await ServedTlsConnectionAsync(token);
        if (connection is null)
        {
            return;
        }

        string kind;
        if (random.Next(2) == 0)
        {
            // A header announcing 16 KiB of application data, 1 to 1,000 bytes of it, then the FIN.
            kind = "cut_then_fin";
            byte[] cut = Noise(5 + random.Next(1, 1_000), seed: random.Next(), header: [0x17, 0x03, 0x03, 0x40, 0x00]);
            await connection.Socket.SendAsync(cut, SocketFlags.None, token);
            connection.Socket.Shutdown(SocketShutdown.Send);
        }
        else
        {
            kind = "bad_record";
            await connection.Socket.SendAsync(Noise(305, seed: random.Next(), header: [0x17, 0x03, 0x03, 0x01, 0x2C]), SocketFlags.None, token);
        }

        var clock = Stopwatch.StartNew();
        (bool closed, _) = await ReadRawUntilClosedAsync(connection.Socket, token);
        Count("tls_cut_record", kind, closed && clock.Elapsed < PromptClose,
            $"expected a prompt close, got closed={closed} after {clock.Elapsed.TotalSeconds:F1} s");
    });

    /// <summary>After a request answered 200, the client ends: close_notify then the FIN, or the FIN alone. The server must close promptly.</summary>
    public Task TlsCloseAsync(int seed) => LoopAsync("tls_close", seed, async (random, token) =>
    {
        using Connection? connection = await ServedTlsConnectionAsync(token);
        if (connection is null)
        {
            return;
        }

        bool notify = random.Next(2) == 0;
        if (notify)
        {
            await connection.CloseNotifyAsync();
        }

        connection.Socket.Shutdown(SocketShutdown.Send);
        var clock = Stopwatch.StartNew();
        (bool closed, _) = await ReadRawUntilClosedAsync(connection.Socket, token);
        Count("tls_close", notify ? "close_notify" : "no_close_notify", closed && clock.Elapsed < PromptClose,
            $"expected a prompt close, got closed={closed} after {clock.Elapsed.TotalSeconds:F1} s");
    });

    /// <summary>A TLS connection on which one GET /plaintext was answered 200 with its body; null (and a surprise counted) otherwise.</summary>
    private async Task<Connection?> ServedTlsConnectionAsync(CancellationToken token)
    {
        Connection connection = await Connection.OpenAsync(endpoint, tls: true, token);
        await connection.SendAsync("GET /plaintext HTTP/1.1\r\nHost: soak\r\n\r\n", token);
        if (await connection.ReadResponseAsync(token) is not { Status: 200, BodyLength: 13 } response)
        {
            outcomes.Surprise("tls", "expected 200 with the plaintext body before the TLS ending");
            connection.Dispose();
            return null;
        }

        outcomes.Served(1);
        return connection;
    }

    /// <summary>Reads the socket itself (below TLS) until the server closes it: whether it did (FIN or reset), and the first bytes it sent.</summary>
    private static async Task<(bool Closed, byte[] Received)> ReadRawUntilClosedAsync(Socket socket, CancellationToken token)
    {
        byte[] buffer = new byte[16 * 1024];
        var received = new MemoryStream();
        try
        {
            int read;
            while ((read = await socket.ReceiveAsync(buffer, SocketFlags.None, token)) > 0)
            {
                received.Write(buffer, 0, (int)Math.Min(read, 64 * 1024 - received.Length));
            }

            return (true, received.ToArray());
        }
        catch (SocketException)
        {
            return (true, received.ToArray());
        }
    }

    /// <summary>True when the bytes are nothing, or whole TLS alert records (content type 21, two bytes each).</summary>
    private static bool OnlyAlerts(byte[] bytes)
    {
        int at = 0;
        while (at < bytes.Length)
        {
            if (bytes.Length - at < 7 || bytes[at] != 21 || bytes[at + 3] != 0 || bytes[at + 4] != 2)
            {
                return false;
            }

            at += 7;
        }

        return true;
    }

    private static string Describe(byte[] bytes) => bytes.Length == 0
        ? "no bytes"
        : $"{bytes.Length} bytes starting {Convert.ToHexString(bytes.AsSpan(0, Math.Min(bytes.Length, 16)))}";

    /// <summary><paramref name="length"/> bytes: <paramref name="header"/>, then noise from <paramref name="seed"/>.</summary>
    private static byte[] Noise(int length, int seed, byte[] header)
    {
        byte[] bytes = new byte[length];
        new Random(seed).NextBytes(bytes);
        header.CopyTo(bytes, 0);
        return bytes;
    }

    /// <summary>Runs SslStream's client handshake into a stream that keeps what it writes and fails the first read: its ClientHello.</summary>
    private static byte[] CaptureClientHello()
    {
        var capture = new HelloCapture();
        using var client = new SslStream(capture);
        try
        {
            client.AuthenticateAsClient(new SslClientAuthenticationOptions
            {
                TargetHost = "localhost",
                ApplicationProtocols = [SslApplicationProtocol.Http11],
            });
        }
        catch (Exception exception) when (exception is IOException or System.Security.Authentication.AuthenticationException)
        {
            // Expected: the capture never answers.
        }

        byte[] hello = capture.Written.ToArray();
        return hello.Length > 5 && hello[0] == 0x16 ? hello : throw new InvalidOperationException("SslStream wrote no ClientHello.");
    }

    private sealed class HelloCapture : Stream
    {
        public MemoryStream Written { get; } = new();

        public override bool CanRead => true;

        public override bool CanSeek => false;

        public override bool CanWrite => true;

        public override long Length => throw new NotSupportedException();

        public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }

        public override void Flush()
        {
        }

        public override int Read(byte[] buffer, int offset, int count) => throw new IOException("The ClientHello is captured; no server answers.");

        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

        public override void SetLength(long value) => throw new NotSupportedException();

        public override void Write(byte[] buffer, int offset, int count) => Written.Write(buffer, offset, count);
    }
}
