using System;
using System.IO;
using System.Net;
using System.Net.Sockets;
using System.Security.Authentication;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace Falconet.Soak;

/// <summary>
/// The kinds of client the soak mixes. Each runs in a loop until the run's end; every wait is bounded, so a server that
/// hangs shows as an unexpected outcome instead of a stuck run. With <c>tls</c>, every connection runs the TLS handshake
/// first (the TLS-only kinds are in Scenarios.Tls.cs).
/// </summary>
internal sealed partial class Scenarios(IPEndPoint endpoint, bool tls, Outcomes outcomes, CancellationToken stop)
{
    private static readonly TimeSpan Wait = TimeSpan.FromSeconds(15);

    // Above the sample's request-headers timeout (30 s) and the body rate's grace: the server must act first.
    private static readonly TimeSpan SlowWait = TimeSpan.FromSeconds(45);

    /// <summary>Requests the server must refuse, with the status it must answer before it closes.</summary>
    private static readonly (string Name, byte[] Request, int Status)[] Invalid =
    [
        ("no_colon", Ascii("GET /plaintext HTTP/1.1\r\nHost: soak\r\nNo colon here\r\n\r\n"), 400),
        ("no_host", Ascii("GET /plaintext HTTP/1.1\r\n\r\n"), 400),
        ("both_framings", Ascii("POST /plaintext HTTP/1.1\r\nHost: soak\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"), 400),
        ("bare_lf", Ascii("GET /plaintext HTTP/1.1\nHost: soak\n\n"), 400),
        ("long_line", Ascii("GET /" + new string('a', 9_000) + " HTTP/1.1\r\nHost: soak\r\n\r\n"), 414),
        ("large_headers", Ascii("GET /plaintext HTTP/1.1\r\nHost: soak\r\nX-Big: " + new string('b', 33_000) + "\r\n\r\n"), 431),
        ("body_too_large", Ascii("POST /plaintext HTTP/1.1\r\nHost: soak\r\nContent-Length: 99999999999\r\n\r\n"), 413),
        ("unknown_coding", Ascii("POST /plaintext HTTP/1.1\r\nHost: soak\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"), 501),
        ("version", Ascii("GET /plaintext HTTP/2.0\r\nHost: soak\r\n\r\n"), 505),
    ];

    /// <summary>Keep-alive connections sending pipelined batches of /plaintext and /json, every response checked.</summary>
    public Task ValidAsync(int seed) => LoopAsync("valid", seed, async (random, token) =>
    {
        using Connection connection = await Connection.OpenAsync(endpoint, tls, token);
        int batches = random.Next(1, 200);
        for (int batch = 0; batch < batches && !stop.IsCancellationRequested; batch++)
        {
            bool json = random.Next(2) == 0;
            int depth = random.Next(1, 17);
            var requests = new StringBuilder();
            for (int i = 0; i < depth; i++)
            {
                requests.Append(json ? "GET /json HTTP/1.1\r\nHost: soak\r\n\r\n" : "GET /plaintext HTTP/1.1\r\nHost: soak\r\n\r\n");
            }

            await connection.SendAsync(requests.ToString(), token);
            for (int i = 0; i < depth; i++)
            {
                var response = await connection.ReadResponseAsync(token);
                if (response is not { Status: 200 } ok || ok.BodyLength != (json ? 27 : 13))
                {
                    outcomes.Surprise("valid", $"expected 200 with the {(json ? "json" : "plaintext")} body, got {response}");
                    return;
                }
            }

            outcomes.Served(depth);
        }

        outcomes.Count("valid", "connections");
    });

    /// <summary>Malformed or oversized requests: the right error status, then the close.</summary>
    public Task InvalidAsync(int seed) => LoopAsync("invalid", seed, async (random, token) =>
    {
        (string name, byte[] request, int status) = Invalid[random.Next(Invalid.Length)];
        using Connection connection = await Connection.OpenAsync(endpoint, tls, token);
        await connection.SendAsync(request, token);
        var response = await connection.ReadResponseAsync(token);
        if (response?.Status != status || !response.Value.Close || !await connection.ClosedByServerAsync(token))
        {
            outcomes.Surprise("invalid", $"{name}: expected {status} and a close, got {response}");
            return;
        }

        outcomes.Count("invalid", $"{name}_{status}");
    });

    /// <summary>A request head trickled byte by byte (answered 408), or a body trickled far below the minimum rate (closed).</summary>
    public Task SlowAsync(int seed) => LoopAsync("slow", seed, SlowWait, async (random, token) =>
    {
        using Connection connection = await Connection.OpenAsync(endpoint, tls, token);
        if (random.Next(2) == 0)
        {
            await connection.SendAsync("GET /plaintext HTTP/1.1\r\nHost: soak\r\nX-Slow: ", token);
            Task<(int Status, int BodyLength, bool Close)?> response = connection.ReadResponseAsync(token);
            while (!response.IsCompleted)
            {
                await Task.WhenAny(response, Task.Delay(500, token));
                if (!response.IsCompleted)
                {
                    await SendIgnoringResetAsync(connection, "a", token);
                }
            }

            Count("slow", "head", (await response)?.Status == 408, "expected 408 for a trickled head");
            return;
        }

        // A 60,000-byte body the sample does not read: it answers 405 at once, then drains the body, at 20 bytes/s.
        await connection.SendAsync("POST /plaintext HTTP/1.1\r\nHost: soak\r\nContent-Length: 60000\r\n\r\n", token);
        var answer = await connection.ReadResponseAsync(token);
        Task<bool> closed = connection.ClosedByServerAsync(token);
        while (!closed.IsCompleted)
        {
            await Task.WhenAny(closed, Task.Delay(500, token));
            await SendIgnoringResetAsync(connection, "0123456789", token);
        }

        Count("slow", "body", answer?.Status == 405 && await closed, "expected 405 and a close for a trickled body");
    });

    /// <summary>Clients that go away: idle after the connect, in the middle of a head, without reading the response, or after they stopped reading.</summary>
    public Task AbandonedAsync(int seed) => LoopAsync("abandoned", seed, async (random, token) =>
    {
        using Connection connection = await Connection.OpenAsync(endpoint, tls, token, receiveBuffer: 4096);
        switch (random.Next(4))
        {
            case 0:
                await Task.Delay(random.Next(100, 5_000), token);
                outcomes.Count("abandoned", "idle");
                break;
            case 1:
                await connection.SendAsync("GET /plaintext HTTP/1.1\r\nHost: so", token);
                await Task.Delay(random.Next(100, 2_000), token);
                outcomes.Count("abandoned", "partial_head");
                break;
            case 2:
                await connection.SendAsync("GET /json HTTP/1.1\r\nHost: soak\r\n\r\n", token);
                outcomes.Count("abandoned", "unread_response");
                break;
            default:
                // Stops reading: the server's sends stall once the socket buffers are full.
                await connection.SendAsync(Repeat("GET /plaintext HTTP/1.1\r\nHost: soak\r\n\r\n", 2_000), token);
                await Task.Delay(random.Next(1_000, 8_000), token);
                outcomes.Count("abandoned", "stalled_reader");
                break;
        }
    });

    /// <summary>Clients that reset the connection (SO_LINGER 0) after a request, in the middle of a body, or while responses arrive.</summary>
    public Task ResetAsync(int seed) => LoopAsync("reset", seed, async (random, token) =>
    {
        Connection connection = await Connection.OpenAsync(endpoint, tls, token);
        try
        {
            switch (random.Next(3))
            {
                case 0:
                    await connection.SendAsync("GET /plaintext HTTP/1.1\r\nHost: soak\r\n\r\n", token);
                    outcomes.Count("reset", "after_request");
                    break;
                case 1:
                    await connection.SendAsync("POST /plaintext HTTP/1.1\r\nHost: soak\r\nContent-Length: 100000\r\n\r\n", token);
                    await connection.SendAsync(new byte[random.Next(1, 50_000)], token);
                    outcomes.Count("reset", "mid_body");
                    break;
                default:
                    await connection.SendAsync(Repeat("GET /json HTTP/1.1\r\nHost: soak\r\n\r\n", 300), token);
                    for (int i = random.Next(0, 20); i > 0; i--)
                    {
                        await connection.ReadResponseAsync(token);
                    }

                    outcomes.Count("reset", "mid_response");
                    break;
            }
        }
        finally
        {
            connection.Reset();
        }
    });

    /// <summary>Large bodies (Content-Length or chunked, up to 4 MiB) the sample refuses with 405, then drains or closes on.</summary>
    public Task LargeBodyAsync(int seed) => LoopAsync("large_body", seed, async (random, token) =>
    {
        using Connection connection = await Connection.OpenAsync(endpoint, tls, token);
        int size = random.Next(64 * 1024, 4 * 1024 * 1024);
        bool chunked = random.Next(2) == 0;
        Task<(int Status, int BodyLength, bool Close)?> response = connection.ReadResponseAsync(token);
        try
        {
            await connection.SendAsync(chunked
                ? "POST /plaintext HTTP/1.1\r\nHost: soak\r\nTransfer-Encoding: chunked\r\n\r\n"
                : $"POST /plaintext HTTP/1.1\r\nHost: soak\r\nContent-Length: {size}\r\n\r\n", token);
            byte[] piece = new byte[16 * 1024];
            byte[] chunkHead = Ascii($"{piece.Length:x}\r\n");
            for (int sent = 0; sent < size; sent += piece.Length)
            {
                if (chunked)
                {
                    await connection.SendAsync(chunkHead, token);
                    await connection.SendAsync(piece, token);
                    await connection.SendAsync("\r\n", token);
                }
                else
                {
                    await connection.SendAsync(piece.AsMemory(0, Math.Min(piece.Length, size - sent)), token);
                }
            }
        }
        catch (Exception exception) when (exception is SocketException or IOException)
        {
            // The server answered and closed before the whole body went: the lingering close read what it could.
        }

        Count("large_body", chunked ? "chunked" : "content_length", (await response)?.Status == 405, "expected 405 for a POST to /plaintext");
    });

    /// <summary>Many connections that pipeline large batches and read them slowly: pushes the server's buffers (and pools) up.</summary>
    public Task BurstAsync(int seed) => LoopAsync("burst", seed, async (random, token) =>
    {
        using Connection connection = await Connection.OpenAsync(endpoint, tls, token, receiveBuffer: 4096);
        await connection.SendAsync(Repeat("GET /plaintext HTTP/1.1\r\nHost: soak\r\n\r\n", 500), token);
        for (int i = 0; i < 500; i++)
        {
            if (await connection.ReadResponseAsync(token) is not { Status: 200 })
            {
                outcomes.Surprise("burst", "expected 500 responses of 200");
                return;
            }

            if (i % 50 == 0)
            {
                await Task.Delay(random.Next(10, 200), token);
            }
        }

        outcomes.Served(500);
        outcomes.Count("burst", "connections");
    });

    private static byte[] Ascii(string text) => Encoding.ASCII.GetBytes(text);

    private static string Repeat(string text, int count) => new StringBuilder(text.Length * count).Insert(0, text, count).ToString();

    private static async Task SendIgnoringResetAsync(Connection connection, string text, CancellationToken token)
    {
        try
        {
            await connection.SendAsync(text, token);
        }
        catch (Exception exception) when (exception is SocketException or IOException)
        {
            // The server has closed: the read that is pending tells how.
        }
    }

    private void Count(string scenario, string kind, bool expected, string surprise)
    {
        if (expected)
        {
            outcomes.Count(scenario, kind);
        }
        else
        {
            outcomes.Surprise(scenario, $"{kind}: {surprise}");
        }
    }

    private Task LoopAsync(string scenario, int seed, Func<Random, CancellationToken, Task> iteration) => LoopAsync(scenario, seed, Wait, iteration);

    /// <summary>
    /// Runs <paramref name="iteration"/> again and again until the end of the run, each within <paramref name="wait"/>;
    /// the hostile kinds pause a little in between, so that they stay a mix and do not become a flood.
    /// </summary>
    private async Task LoopAsync(string scenario, int seed, TimeSpan wait, Func<Random, CancellationToken, Task> iteration)
    {
        var random = new Random(seed);
        bool pause = scenario is not ("valid" or "burst");
        while (!stop.IsCancellationRequested)
        {
            if (pause)
            {
                try
                {
                    await Task.Delay(random.Next(5, 50), stop);
                }
                catch (OperationCanceledException)
                {
                    return;
                }
            }

            using var timeout = CancellationTokenSource.CreateLinkedTokenSource(stop);
            timeout.CancelAfter(wait);
            try
            {
                await iteration(random, timeout.Token);
            }
            catch (OperationCanceledException) when (stop.IsCancellationRequested)
            {
                return;
            }
            catch (OperationCanceledException)
            {
                outcomes.Surprise(scenario, $"no answer within {wait.TotalSeconds} s");
            }
            catch (Exception exception) when (exception is SocketException or InvalidOperationException or IOException or AuthenticationException)
            {
                outcomes.Surprise(scenario, $"{exception.GetType().Name}: {exception.Message}");
            }
        }
    }
}
