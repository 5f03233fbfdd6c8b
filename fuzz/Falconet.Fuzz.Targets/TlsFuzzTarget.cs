using System;
using System.Collections.Generic;
using System.Linq;
using System.Net;
using System.Net.Security;
using System.Security.Authentication;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using System.Threading.Tasks;
using Falconet.Http;
using Falconet.Server;

namespace Falconet.Fuzz;

/// <summary>
/// The fuzz target over the TLS layer: a real <see cref="FalconetServer"/> with one HTTPS endpoint on the in-memory
/// transport, for one <see cref="TlsEngine"/>. The input's first byte picks the mode (<see cref="Run"/>).
/// </summary>
/// <remarks>
/// <para>
/// Raw (first byte even): the rest of the input is the client's whole byte stream, received at once (bit 1 clear) or in
/// pieces of 1 to 64 bytes chosen by its hash. No client can finish a handshake this way, so the checks are: no exception
/// escapes; the application is never called; the server sends only whole TLS records and nothing after closing; the
/// connection ends; every pool block comes back.
/// </para>
/// <para>
/// Handshake (first byte odd): an <see cref="SslStream"/> client completes a real handshake over a
/// <see cref="DuplexConnection"/> and sends one to three HTTP/1.1 requests, the last with <c>Connection: close</c>. The
/// second byte says how: bit 0 TLS 1.3 (else 1.2), bits 1-2 the number of requests, bit 3 one write per request (else
/// one write for all), bits 4-6 the <see cref="WireCorruption"/>; the rest is the <see cref="WirePlan"/> (offset, detail,
/// piece sizes). Checks: without corruption the handshake succeeds and the answers are exactly those of
/// the plaintext server; with corruption the answers are a prefix of those, and none answers a request whose records
/// the corruption reached or followed; in both cases no exception escapes, the server sends nothing after closing, both
/// ends finish within 10 s, and every pool block comes back.
/// </para>
/// </remarks>
public sealed class TlsFuzzTarget : IFuzzTarget
{
    private const int MaxRequests = 3;

    private static readonly string[] s_requests =
    [
        "GET /first HTTP/1.1\r\nHost: localhost\r\n",
        "POST /second HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\n",
        "GET /third?x=1 HTTP/1.1\r\nHost: localhost\r\nAccept: */*\r\n",
    ];

    private static readonly KnownMethod[] s_methods = [KnownMethod.Get, KnownMethod.Post, KnownMethod.Get];

    private readonly FalconetServer _server;
    private readonly InMemoryTransportFactory _transport;
    private readonly EchoApplication _application;
    private readonly ErrorLoggerFactory _logs;
    private readonly X509Certificate2 _certificate;
    private readonly IReadOnlyList<Answer>[] _expected;

    private TlsFuzzTarget(FalconetServer server, InMemoryTransportFactory transport, EchoApplication application, ErrorLoggerFactory logs,
        X509Certificate2 certificate, IReadOnlyList<Answer>[] expected)
    {
        _server = server;
        _transport = transport;
        _application = application;
        _logs = logs;
        _certificate = certificate;
        _expected = expected;
    }

    /// <summary>The engine the server runs.</summary>
    public TlsEngine Engine { get; private init; }

    /// <summary>
    /// Starts the server with <paramref name="engine"/> and a fresh self-signed certificate, after taking the plaintext
    /// server's answers to the requests as the expected ones; <paramref name="trackLeaks"/> records who rented each block.
    /// </summary>
    public static async Task<TlsFuzzTarget> StartAsync(TlsEngine engine, bool trackLeaks = false)
    {
        var expected = new IReadOnlyList<Answer>[MaxRequests + 1];
        await using (ConnectionFuzzTarget plaintext = await ConnectionFuzzTarget.StartAsync().ConfigureAwait(false))
        {
            for (int count = 1; count <= MaxRequests; count++)
            {
                expected[count] = plaintext.Exchange([Requests(count).SelectMany(request => request).ToArray()]);
            }
        }

        X509Certificate2 certificate = CreateCertificate();
        var transport = new InMemoryTransportFactory(trackLeaks);
        var application = new EchoApplication();
        var logs = new ErrorLoggerFactory();
        var options = new FalconetServerOptions
        {
            TransportFactory = transport,
            Limits = ConnectionFuzzTarget.Limits,
            LoggerFactory = logs,
        };
        options.HttpsEndpoints.Add(new HttpsEndpoint(new IPEndPoint(IPAddress.Loopback, 0),
            new TlsServerOptions { ServerCertificate = certificate, Engine = engine }));
        var server = new FalconetServer(options, application);
        await server.StartAsync().ConfigureAwait(false);
        var target = new TlsFuzzTarget(server, transport, application, logs, certificate, expected) { Engine = engine };
        ConnectionFuzzTarget.WaitUntil(() => transport.IsAccepting, "the accept loop to wait");
        return target;
    }

    /// <summary>The requests of a handshake run of <paramref name="count"/> requests: the last says <c>Connection: close</c>.</summary>
    public static byte[][] Requests(int count)
    {
        var requests = new byte[count][];
        for (int i = 0; i < count; i++)
        {
            string head = s_requests[i] + (i == count - 1 ? "Connection: close\r\n" : "") + "\r\n";
            requests[i] = System.Text.Encoding.ASCII.GetBytes(i == 1 ? head + "hello" : head);
        }

        return requests;
    }

    /// <summary>Runs <paramref name="input"/> in the mode its first byte picks; throws <see cref="FuzzPropertyException"/> when a property breaks.</summary>
    public void Run(ReadOnlySpan<byte> input)
    {
        if (input.IsEmpty || (input[0] & 1) == 0)
        {
            byte[] bytes = input.IsEmpty ? [] : input[1..].ToArray();
            RunRaw(!input.IsEmpty && (input[0] & 2) != 0 ? ConnectionFuzzTarget.Split(bytes) : [bytes]);
            return;
        }

        byte flags = input.Length > 1 ? input[1] : (byte)0;
        int corruption = (flags >> 4) & 7;
        RunHandshake(
            tls13: (flags & 1) != 0,
            requests: 1 + (((flags >> 1) & 3) % MaxRequests),
            separateWrites: (flags & 8) != 0,
            WirePlan.Read(corruption <= (int)WireCorruption.InsertGarbage ? (WireCorruption)corruption : WireCorruption.None,
                input.Length > 2 ? input[2..] : []));
    }

    /// <summary>One connection that receives <paramref name="pieces"/> from a client that never reads; returns what the server sent.</summary>
    public ReadOnlyMemory<byte> RunRaw(IReadOnlyList<ReadOnlyMemory<byte>> pieces)
    {
        Reset();
        InMemoryConnection connection = _transport.Connect(pieces);
        ConnectionFuzzTarget.WaitUntil(() => _server.ConnectionCount == 0 && _transport.IsAccepting, "the connection to end");
        RequireCleanEnd(connection.Disposed, connection.SentAfterClose);
        Require(_application.Methods.Count == 0, $"The application was called {_application.Methods.Count} times without a handshake.");
        RequireWholeRecords(connection.Sent.Span);
        return connection.Sent;
    }

    /// <summary>
    /// One connection with a real client that sends <paramref name="requests"/> requests over <paramref name="plan"/>;
    /// returns the answers it read.
    /// </summary>
    public IReadOnlyList<Answer> RunHandshake(bool tls13, int requests, bool separateWrites, WirePlan plan)
    {
        Reset();
        var connection = new DuplexConnection(_transport.Pool, plan);
        _transport.Connect(connection);
        Task<ClientRun> client = Task.Run(() => ClientAsync(connection, tls13, Requests(requests), separateWrites));
        if (!client.Wait(ConnectionFuzzTarget.RunLimit))
        {
            throw new FuzzPropertyException($"Timed out waiting for the client (a hang; the server sent {connection.Sent.Length} bytes).");
        }

        ConnectionFuzzTarget.WaitUntil(() => connection.Disposed && _server.ConnectionCount == 0 && _transport.IsAccepting, "the connection to end");
        RequireCleanEnd(connection.Disposed, connection.SentAfterClose, peerFailed: connection.CorruptedAt is not null);

        ClientRun run = client.Result;
        KnownMethod[] methods = s_methods[..requests];
        List<Answer> answers = ResponseStream.Parse(run.Received, methods);
        IReadOnlyList<Answer> expected = _expected[requests];
        // A connection that fails on a corrupted record may drop the answers it had not sent yet, never invent one.
        int? corruptedAt = connection.CorruptedAt;
        int called = _application.Methods.Count - _application.Failed;
        Require(corruptedAt is null ? answers.Count == called : answers.Count <= called,
            $"{answers.Count} answers for {_application.Methods.Count} application calls of which {_application.Failed} failed.");
        if (corruptedAt is null)
        {
            Require(run.Failure is null, $"The client failed without corruption: {run.Failure}");
            Require(answers.SequenceEqual(expected), $"The answers differ from the plaintext server's: {answers.Count} of {expected.Count}.");
            return answers;
        }

        Require(answers.Count <= expected.Count && answers.SequenceEqual(expected.Take(answers.Count)),
            "An answer over a corrupted connection differs from the plaintext server's.");
        if (run.RequestsStart is int start && corruptedAt >= start)
        {
            int intact = run.RequestEnds.Count(end => end <= corruptedAt);
            Require(answers.Count <= intact,
                $"{answers.Count} answers, but only {intact} requests arrived before the corruption at byte {corruptedAt} ({plan.Corruption}).");
        }

        return answers;
    }

    /// <inheritdoc/>
    public async ValueTask DisposeAsync()
    {
        await _server.DisposeAsync().ConfigureAwait(false);
        _transport.Pool.Dispose();
        _certificate.Dispose();
    }

    private static X509Certificate2 CreateCertificate()
    {
        using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var request = new CertificateRequest("CN=localhost", key, HashAlgorithmName.SHA256);
        var names = new SubjectAlternativeNameBuilder();
        names.AddDnsName("localhost");
        request.CertificateExtensions.Add(names.Build());
        return request.CreateSelfSigned(DateTimeOffset.UtcNow.AddDays(-1), DateTimeOffset.UtcNow.AddDays(30));
    }

    private async Task<ClientRun> ClientAsync(DuplexConnection connection, bool tls13, byte[][] requests, bool separateWrites)
    {
        var run = new ClientRun();
        var received = new List<byte>();
        string thumbprint = _certificate.Thumbprint;
        var ssl = new SslStream(connection.Client, leaveInnerStreamOpen: false);
        try
        {
            await ssl.AuthenticateAsClientAsync(new SslClientAuthenticationOptions
            {
                TargetHost = "localhost",
                EnabledSslProtocols = tls13 ? SslProtocols.Tls13 : SslProtocols.Tls12,
                ApplicationProtocols = [SslApplicationProtocol.Http11],
                CertificateRevocationCheckMode = X509RevocationMode.NoCheck,
                RemoteCertificateValidationCallback = (_, certificate, _, _) =>
                    certificate is not null && string.Equals(certificate.GetCertHashString(), thumbprint, StringComparison.OrdinalIgnoreCase),
            }).ConfigureAwait(false);

            run.RequestsStart = connection.ClientBytesWritten;
            if (separateWrites)
            {
                foreach (byte[] request in requests)
                {
                    await ssl.WriteAsync(request).ConfigureAwait(false);
                    run.RequestEnds.Add(connection.ClientBytesWritten);
                }
            }
            else
            {
                await ssl.WriteAsync(requests.SelectMany(request => request).ToArray()).ConfigureAwait(false);
                run.RequestEnds.AddRange(Enumerable.Repeat(connection.ClientBytesWritten, requests.Length));
            }

            byte[] buffer = new byte[4096];
            int read;
            while ((read = await ssl.ReadAsync(buffer).ConfigureAwait(false)) > 0)
            {
                received.AddRange(buffer.AsSpan(0, read));
            }
        }
        catch (Exception exception)
        {
            run.Failure = exception;
        }
        finally
        {
            await ssl.DisposeAsync().ConfigureAwait(false);
        }

        run.Received = [.. received];
        return run;
    }

    private void Reset()
    {
        _logs.Clear();
        _application.Methods.Clear();
        _application.Failed = 0;
    }

    /// <param name="peerFailed">True when the peer's bytes were corrupted: then a connection may end on the TLS layer's own failure.</param>
    private void RequireCleanEnd(bool disposed, bool sentAfterClose, bool peerFailed = false)
    {
        IReadOnlyList<LoggedError> errors = _logs.ErrorEvents;
        if (errors.Any(error => !(peerFailed && IsPeerFailure(error))))
        {
            throw new FuzzPropertyException("An error escaped the connection: " + string.Join("\n", errors.Select(error => error.Text)));
        }

        Require(disposed && !sentAfterClose, sentAfterClose ? "The server sent after closing." : "The connection was never closed.");
        long outstanding = _transport.Pool.BlocksOutstanding;
        Require(outstanding == 0, $"{outstanding} pool blocks were not returned.");
    }

    /// <summary>
    /// True for the way a connection ends when its peer sends what TLS refuses: an <see cref="System.IO.IOException"/> or an
    /// <see cref="AuthenticationException"/> from the TLS layer, logged as the connection's I/O error, caused by nothing
    /// that would be a bug in the server (a null reference, a misuse, an index out of range).
    /// </summary>
    private static bool IsPeerFailure(LoggedError error)
    {
        if (error.EventId != 3 || error.Exception is not (System.IO.IOException or AuthenticationException))
        {
            return false;
        }

        for (Exception? inner = error.Exception; inner is not null; inner = inner.InnerException)
        {
            if (inner is NullReferenceException or InvalidOperationException or ArgumentException or IndexOutOfRangeException or InvalidCastException)
            {
                return false;
            }
        }

        return true;
    }

    /// <summary>Requires <paramref name="sent"/> to be whole TLS records: a known content type, version 3.x (an alert's aside), a length TLS allows.</summary>
    private static void RequireWholeRecords(ReadOnlySpan<byte> sent)
    {
        int position = 0;
        while (position < sent.Length)
        {
            Require(sent.Length - position >= 5, $"The server sent a partial record header at byte {position}.");
            byte type = sent[position];
            int length = (sent[position + 3] << 8) | sent[position + 4];
            // OpenSSL writes the alert that refuses a ClientHello with the version the client offered, whatever it was.
            Require(type is >= 20 and <= 23 && (type == 21 || sent[position + 1] == 3) && length <= (16 * 1024) + 2048,
                $"The server sent a malformed record header at byte {position}: {Convert.ToHexString(sent.Slice(position, 5))}.");
            Require(sent.Length - position - 5 >= length, $"The server sent a partial record at byte {position}.");
            position += 5 + length;
        }
    }

    private static void Require(bool condition, string violation)
    {
        if (!condition)
        {
            throw new FuzzPropertyException(violation);
        }
    }

    /// <summary>What the client did: where its requests' records end in its byte stream, what it read, how it failed.</summary>
    private sealed class ClientRun
    {
        public int? RequestsStart { get; set; }

        public List<int> RequestEnds { get; } = [];

        public byte[] Received { get; set; } = [];

        public Exception? Failure { get; set; }
    }
}
