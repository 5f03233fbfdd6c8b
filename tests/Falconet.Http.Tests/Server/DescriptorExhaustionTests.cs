using System;
using System.Collections.Generic;
using System.Globalization;
using System.Linq;
using System.Net;
using System.Net.Http;
using System.Net.Sockets;
using System.Text;
using System.Text.RegularExpressions;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Shouldly;

namespace Falconet.Http.Tests.Server;

/// <summary>
/// A connection flood far past the sample's file descriptor limit (lowered for it alone, as a child process): the process
/// survives, refuses the excess, serves again afterwards and stops cleanly with every pool block back. Before the
/// connection limit, such a flood ended the process ("Out of memory." and SIGABRT) in 8 of 9 runs: the runtime could
/// not start a thread once connections held every descriptor.
/// </summary>
public partial class DescriptorExhaustionTests
{
    private const int SampleDescriptorLimit = 256;

    protected virtual string Transport => "sockets";

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_flood_past_the_descriptor_limit_is_refused_and_the_sample_keeps_serving()
    {
        using SampleProcess sample = SampleProcess.Start(SampleDescriptorLimit, "--port", "0", "--transport", Transport, "--stats");
        Uri url = await sample.WaitUntilListeningAsync();
        var endpoint = new IPEndPoint(IPAddress.Loopback, url.Port);

        // As many as this process may open, up to 600: well past what the sample may.
        int flood = (int)Math.Min(600, (DescriptorLimit.SoftLimit() ?? 1_000) - 100);
        flood.ShouldBeGreaterThan(SampleDescriptorLimit * 2);
        int answered = await FloodAsync(endpoint, flood);
        sample.Process.HasExited.ShouldBeFalse();
        answered.ShouldBeGreaterThan(0);

        // Served again once the flood is gone (the sample may still be closing what it accepted).
        using var http = new HttpClient { Timeout = TestTimeouts.Operation };
        string? body = null;
        for (int attempt = 0; attempt < 50 && body is null; attempt++)
        {
            try
            {
                body = await http.GetStringAsync(new Uri(url, "plaintext"));
            }
            catch (HttpRequestException)
            {
                await Task.Delay(100);
            }
        }

        body.ShouldBe("Hello, World!");

        (int exitCode, string output, string errors) = await sample.InterruptAsync();
        exitCode.ShouldBe(0, $"stderr: {errors}");
        output.ShouldContain("connections_open=0 blocks_outstanding=0 ");
        Match refused = RefusedLine().Match(output);
        refused.Success.ShouldBeTrue(output);
        long.Parse(refused.Groups["total"].Value, CultureInfo.InvariantCulture).ShouldBeGreaterThan(0);
    }

    /// <summary>Opens <paramref name="count"/> connections at once, sends a request on each, and counts the answers.</summary>
    private static async Task<int> FloodAsync(IPEndPoint endpoint, int count)
    {
        var sockets = new List<Socket>(count);
        byte[] request = Encoding.ASCII.GetBytes("GET /plaintext HTTP/1.1\r\nHost: flood\r\n\r\n");
        try
        {
            var connects = new List<Task>(count);
            for (int i = 0; i < count; i++)
            {
                var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
                sockets.Add(socket);
                connects.Add(socket.ConnectAsync(endpoint));
            }

            await Task.WhenAll(connects.Select(connect => connect.ContinueWith(_ => { }, TaskScheduler.Default)));
            var replies = new List<Task<bool>>(count);
            foreach (Socket socket in sockets)
            {
                replies.Add(AnsweredAsync(socket, request));
            }

            bool[] results = await Task.WhenAll(replies);
            return results.Count(answered => answered);
        }
        finally
        {
            foreach (Socket socket in sockets)
            {
                socket.Dispose();
            }
        }
    }

    /// <summary>True when the connection answers 200 within a few seconds; false when it was refused, reset or is still queued.</summary>
    private static async Task<bool> AnsweredAsync(Socket socket, byte[] request)
    {
        try
        {
            if (!socket.Connected)
            {
                return false;
            }

            await socket.SendAsync(request);
            byte[] buffer = new byte[256];
            int read = await socket.ReceiveAsync(buffer, SocketFlags.None).WaitAsync(TimeSpan.FromSeconds(3));
            return read > 12 && Encoding.ASCII.GetString(buffer, 0, 12) == "HTTP/1.1 200";
        }
        catch (Exception exception) when (exception is SocketException or TimeoutException or ObjectDisposedException)
        {
            return false;
        }
    }

    [GeneratedRegex(@"^falconet\.server\.rejected_connections total=(?<total>\d+)", RegexOptions.Multiline)]
    private static partial Regex RefusedLine();
}

/// <summary>The same test on the libuv transport.</summary>
public sealed class DescriptorExhaustionTestsOnLibuv : DescriptorExhaustionTests
{
    protected override string Transport => "libuv";
}

/// <summary>The same test on the io_uring transport.</summary>
public sealed class DescriptorExhaustionTestsOnIoUring : DescriptorExhaustionTests
{
    protected override string Transport => "iouring";
}
