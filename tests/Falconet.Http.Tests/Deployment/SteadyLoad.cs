using System;
using System.Collections.Concurrent;
using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace Falconet.Http.Tests.Deployment;

/// <summary>
/// A client at a steady rate: <c>connections</c> keep-alive connections, each sending GET /plaintext every <c>interval</c>
/// and checking every response byte for byte. It never retries: a request whose connection closes or resets before its
/// whole response arrived is a failure, and so is any response that is not exactly the sample's. A response with
/// <c>Connection: close</c> is honoured (the next request opens a new connection), as any HTTP/1.1 client does.
/// </summary>
internal sealed class SteadyLoad
{
    private static readonly byte[] s_request = "GET /plaintext HTTP/1.1\r\nHost: falconet\r\nUser-Agent: steady-load\r\n\r\n"u8.ToArray();

    private readonly EndPoint _target;
    private readonly int _connections;
    private readonly TimeSpan _interval;
    private readonly long _maxRequests;
    private readonly ConcurrentQueue<string> _failures = new();
    private long _completed;
    private long _failed;
    private long _resets;
    private long _connects;

    public SteadyLoad(EndPoint target, int connections, TimeSpan interval, long maxRequests)
    {
        _target = target;
        _connections = connections;
        _interval = interval;
        _maxRequests = maxRequests;
    }

    public long Completed => Interlocked.Read(ref _completed);

    public long Failed => Interlocked.Read(ref _failed);

    /// <summary>Failures where the connection was reset (ECONNRESET) under a request.</summary>
    public long Resets => Interlocked.Read(ref _resets);

    /// <summary>Connections opened (the first ones and every reconnect after a <c>Connection: close</c>).</summary>
    public long Connects => Interlocked.Read(ref _connects);

    /// <summary>The first failures, described.</summary>
    public string FailureReport => string.Join(Environment.NewLine, _failures.ToArray());

    /// <summary>Runs every connection until <paramref name="stop"/> fires or the request budget is spent.</summary>
    public Task RunAsync(CancellationToken stop)
    {
        var loops = new Task[_connections];
        for (int i = 0; i < loops.Length; i++)
        {
            loops[i] = Task.Run(() => ConnectionLoopAsync(stop), CancellationToken.None);
        }

        return Task.WhenAll(loops);
    }

    private async Task ConnectionLoopAsync(CancellationToken stop)
    {
        byte[] buffer = new byte[4096];
        Socket? socket = null;
        var clock = Stopwatch.StartNew();
        long sent = 0;
        try
        {
            while (!stop.IsCancellationRequested && Interlocked.Read(ref _completed) + Interlocked.Read(ref _failed) < _maxRequests)
            {
                // Steady: the next request leaves at its slot, whatever the last one took.
                TimeSpan due = _interval * sent++;
                if (due > clock.Elapsed)
                {
                    await Task.Delay(due - clock.Elapsed, CancellationToken.None).ConfigureAwait(false);
                }

                if (socket is null)
                {
                    socket = await ConnectAsync().ConfigureAwait(false);
                    if (socket is null)
                    {
                        continue;
                    }
                }

                (bool ok, bool close) = await ExchangeAsync(socket, buffer).ConfigureAwait(false);
                if (!ok || close)
                {
                    socket.Dispose();
                    socket = null;
                }
            }
        }
        finally
        {
            socket?.Dispose();
        }
    }

    private async Task<Socket?> ConnectAsync()
    {
        var socket = _target is UnixDomainSocketEndPoint
            ? new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified)
            : new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        try
        {
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(5));
            await socket.ConnectAsync(_target, timeout.Token).ConfigureAwait(false);
            Interlocked.Increment(ref _connects);
            return socket;
        }
        catch (Exception exception) when (exception is SocketException or OperationCanceledException)
        {
            Fail($"connect: {exception.Message}", reset: false);
            socket.Dispose();
            return null;
        }
    }

    /// <summary>One request and its response; ok when the response is exactly the sample's, close when it asked to close.</summary>
    private async Task<(bool Ok, bool Close)> ExchangeAsync(Socket socket, byte[] buffer)
    {
        int length = 0;
        try
        {
            await socket.SendAsync(s_request, SocketFlags.None).ConfigureAwait(false);
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(10));
            while (true)
            {
                int received = await socket.ReceiveAsync(buffer.AsMemory(length), SocketFlags.None, timeout.Token).ConfigureAwait(false);
                if (received == 0)
                {
                    Fail($"closed after {length} bytes of the response", reset: false);
                    return (false, true);
                }

                length += received;
                if (TryCheck(buffer.AsSpan(0, length), out bool close, out string? problem))
                {
                    if (problem is not null)
                    {
                        Fail(problem, reset: false);
                        return (false, true);
                    }

                    Interlocked.Increment(ref _completed);
                    return (true, close);
                }

                if (length == buffer.Length)
                {
                    Fail("response larger than 4 KiB", reset: false);
                    return (false, true);
                }
            }
        }
        catch (SocketException exception)
        {
            Fail($"{exception.SocketErrorCode} after {length} bytes of the response", reset: exception.SocketErrorCode == SocketError.ConnectionReset);
            return (false, true);
        }
        catch (OperationCanceledException)
        {
            Fail($"no response within 10 s ({length} bytes)", reset: false);
            return (false, true);
        }
    }

    /// <summary>True once a whole response is in <paramref name="data"/>; <paramref name="problem"/> says what is wrong with it.</summary>
    private static bool TryCheck(ReadOnlySpan<byte> data, out bool close, out string? problem)
    {
        close = false;
        problem = null;
        int headEnd = data.IndexOf("\r\n\r\n"u8);
        if (headEnd < 0)
        {
            return false;
        }

        string head = Encoding.Latin1.GetString(data[..headEnd]);
        int contentLength = -1;
        foreach (string line in head.Split("\r\n"))
        {
            if (line.StartsWith("Content-Length:", StringComparison.OrdinalIgnoreCase))
            {
                contentLength = int.Parse(line.AsSpan(15).Trim(), System.Globalization.CultureInfo.InvariantCulture);
            }
            else if (line.StartsWith("Connection:", StringComparison.OrdinalIgnoreCase) && line.Contains("close", StringComparison.OrdinalIgnoreCase))
            {
                close = true;
            }
        }

        if (contentLength < 0)
        {
            problem = $"no Content-Length: {head}";
            return true;
        }

        if (data.Length < headEnd + 4 + contentLength)
        {
            return false;
        }

        ReadOnlySpan<byte> body = data.Slice(headEnd + 4, contentLength);
        if (!head.StartsWith("HTTP/1.1 200 OK\r\n", StringComparison.Ordinal) || !body.SequenceEqual("Hello, World!"u8)
            || data.Length != headEnd + 4 + contentLength)
        {
            problem = $"unexpected response: {head} / {Encoding.Latin1.GetString(data[(headEnd + 4)..])}";
        }

        return true;
    }

    private void Fail(string what, bool reset)
    {
        Interlocked.Increment(ref _failed);
        if (reset)
        {
            Interlocked.Increment(ref _resets);
        }

        if (_failures.Count < 20)
        {
            _failures.Enqueue($"{DateTime.UtcNow:HH:mm:ss.fff} {what}");
        }
    }
}
