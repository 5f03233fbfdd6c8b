using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;
using System.Net;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Http;
using Falconet.Http.Parsing.Tests.Support;
using Falconet.Server;

namespace Falconet.Fuzz;

/// <summary>
/// The fuzz target over the parser and the connection loop: a real <see cref="FalconetServer"/> on the in-memory
/// transport, one connection per input, answered by an application that echoes what the server parsed.
/// </summary>
/// <remarks>
/// <see cref="Run(ReadOnlySpan{byte})"/> checks, for the input received at once and again split into pieces: no exception
/// escapes the connection; the server sends only well-formed HTTP/1.1 responses and nothing after one that closes; a
/// refused request is answered by an empty error response that comes last, so no byte after it is answered as another
/// request; every pool block comes back; the connection ends; and both ways of receiving get the same answers.
/// </remarks>
public sealed class ConnectionFuzzTarget : IFuzzTarget
{
    /// <summary>How long a run may take before it counts as a hang.</summary>
    internal static readonly TimeSpan RunLimit = TimeSpan.FromSeconds(10);

    private readonly FalconetServer _server;
    private readonly InMemoryTransportFactory _transport;
    private readonly EchoApplication _application;
    private readonly ErrorLoggerFactory _logs;

    private ConnectionFuzzTarget(FalconetServer server, InMemoryTransportFactory transport, EchoApplication application, ErrorLoggerFactory logs)
    {
        _server = server;
        _transport = transport;
        _application = application;
        _logs = logs;
    }

    /// <summary>
    /// The limits the server runs with: the request suite's, small so that every limit is within a fuzzer's reach, and the
    /// same as the suite's so that its seeds get the answers the suite expects.
    /// </summary>
    public static HttpLimits Limits => RequestSuite.Limits;

    /// <summary>Starts the server; <paramref name="trackLeaks"/> records who rented each block (slower, names the leaker).</summary>
    public static async Task<ConnectionFuzzTarget> StartAsync(bool trackLeaks = false)
    {
        var transport = new InMemoryTransportFactory(trackLeaks);
        var application = new EchoApplication();
        var logs = new ErrorLoggerFactory();
        var options = new FalconetServerOptions
        {
            TransportFactory = transport,
            Limits = Limits,
            LoggerFactory = logs,
        };
        options.Endpoints.Add(new IPEndPoint(IPAddress.Loopback, 0));
        var server = new FalconetServer(options, application);
        await server.StartAsync().ConfigureAwait(false);
        var target = new ConnectionFuzzTarget(server, transport, application, logs);
        WaitUntil(() => transport.IsAccepting, "the accept loop to wait");
        return target;
    }

    /// <summary>Runs <paramref name="input"/> received at once, then split where its own hash says; throws <see cref="FuzzPropertyException"/> when a property breaks.</summary>
    public void Run(ReadOnlySpan<byte> input)
    {
        byte[] bytes = input.ToArray();
        IReadOnlyList<Answer> whole = Exchange([bytes]);
        List<ReadOnlyMemory<byte>> pieces = Split(bytes);
        IReadOnlyList<Answer> split = Exchange(pieces);
        RequireSameAnswers(whole, split, pieces);
    }

    /// <summary>Runs <paramref name="input"/> received at once and as <paramref name="pieces"/>, and requires the same answers.</summary>
    public IReadOnlyList<Answer> RunSplit(byte[] input, IReadOnlyList<ReadOnlyMemory<byte>> pieces)
    {
        IReadOnlyList<Answer> whole = Exchange([input]);
        RequireSameAnswers(whole, Exchange(pieces), pieces);
        return whole;
    }

    /// <summary>One connection that receives <paramref name="pieces"/> one per read, then the end of the stream; returns its checked answers.</summary>
    public IReadOnlyList<Answer> Exchange(IReadOnlyList<ReadOnlyMemory<byte>> pieces)
    {
        _logs.Clear();
        _application.Methods.Clear();
        _application.Failed = 0;

        // The accept loop runs the connection on this thread; a connection that waits for something ends later, or never.
        InMemoryConnection connection = _transport.Connect(pieces);
        WaitUntil(() => _server.ConnectionCount == 0 && _transport.IsAccepting, "the connection to end");

        if (_logs.Errors.Count > 0)
        {
            throw new FuzzPropertyException("An error escaped the connection: " + string.Join("\n", _logs.Errors));
        }

        if (!connection.Disposed || connection.SentAfterClose)
        {
            throw new FuzzPropertyException(connection.SentAfterClose ? "The server sent after closing." : "The connection was never closed.");
        }

        long outstanding = _transport.Pool.BlocksOutstanding;
        if (outstanding != 0)
        {
            throw new FuzzPropertyException($"{outstanding} pool blocks were not returned.");
        }

        List<Answer> answers = ResponseStream.Parse(connection.Sent.Span, _application.Methods);
        int fromApplication = answers.Count(answer => answer.StatusCode == 200);
        if (fromApplication != _application.Methods.Count - _application.Failed)
        {
            throw new FuzzPropertyException(
                $"{fromApplication} answers from the application for {_application.Methods.Count} calls of which {_application.Failed} failed.");
        }

        return answers;
    }

    /// <inheritdoc/>
    public async ValueTask DisposeAsync()
    {
        await _server.DisposeAsync().ConfigureAwait(false);
        _transport.Pool.Dispose();
    }

    /// <summary>Pieces of 1 to 64 bytes, mostly short, chosen by a hash of the input so that a run can be repeated.</summary>
    public static List<ReadOnlyMemory<byte>> Split(byte[] input)
    {
        uint hash = 2166136261;
        foreach (byte value in input)
        {
            hash = (hash ^ value) * 16777619;
        }

        var random = new Random((int)hash);
        var pieces = new List<ReadOnlyMemory<byte>>();
        int start = 0;
        while (start < input.Length)
        {
            int length = Math.Min(random.Next(1, random.Next(2) == 0 ? 4 : 65), input.Length - start);
            pieces.Add(input.AsMemory(start, length));
            start += length;
        }

        return pieces;
    }

    private static void RequireSameAnswers(IReadOnlyList<Answer> whole, IReadOnlyList<Answer> split, IReadOnlyList<ReadOnlyMemory<byte>> pieces)
    {
        if (!whole.SequenceEqual(split))
        {
            throw new FuzzPropertyException(
                $"The answers depend on how the bytes arrive.\nAt once: {Describe(whole)}\nIn pieces of {string.Join(",", pieces.Select(p => p.Length))}: {Describe(split)}");
        }
    }

    private static string Describe(IReadOnlyList<Answer> answers)
        => string.Join(" | ", answers.Select(a => a.StatusCode + " " + (a.Body.Length > 80 ? a.Body[..80] + "..." : a.Body).ReplaceLineEndings("\\n")));

    /// <summary>Waits until <paramref name="condition"/> holds; longer than the run limit (10 s) is a hang, a <see cref="FuzzPropertyException"/>.</summary>
    internal static void WaitUntil(Func<bool> condition, string what)
    {
        if (condition())
        {
            return;
        }

        var clock = Stopwatch.StartNew();
        while (!condition())
        {
            if (clock.Elapsed > RunLimit)
            {
                throw new FuzzPropertyException($"Timed out waiting for {what} (a hang).");
            }

            Thread.Sleep(1);
        }
    }
}
