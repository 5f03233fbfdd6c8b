using System;
using System.Diagnostics;
using System.IO;
using System.Net.Http;
using System.Text.RegularExpressions;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Shouldly;

namespace Falconet.AspNetCore.Tests;

/// <summary>
/// The built sample as its users run it (<c>dotnet Falconet.Samples.AspNetCore.dll --server falconet|kestrel</c>), stopped
/// with SIGTERM. The project reference builds it and copies it next to the tests.
/// </summary>
public sealed partial class SampleProcessTests
{
    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData("falconet", "FalconetWebServer")]
    [InlineData("kestrel", "KestrelServerImpl")]
    public async Task The_same_sample_serves_json_on_either_server(string server, string serverType)
    {
        using Process sample = StartSample(server);
        try
        {
            Uri address = await ReadAddressAsync(sample, serverType);
            using var http = new HttpClient { BaseAddress = address, Timeout = TestTimeouts.Operation };
            (await http.GetStringAsync("json")).ShouldBe("{\"message\":\"Hello, World!\"}");
            using HttpResponseMessage plaintext = await http.GetAsync("plaintext");
            (await plaintext.Content.ReadAsStringAsync()).ShouldBe("Hello, World!");
            plaintext.Headers.Contains("X-Elapsed-Microseconds").ShouldBeTrue();
        }
        finally
        {
            await StopAsync(sample);
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task SIGTERM_lets_a_streaming_response_finish_then_the_process_exits_cleanly()
    {
        using Process sample = StartSample("falconet");
        try
        {
            Uri address = await ReadAddressAsync(sample, "FalconetWebServer");
            using var http = new HttpClient { BaseAddress = address, Timeout = TestTimeouts.Operation };
            using HttpResponseMessage response = await http.GetAsync("stream", HttpCompletionOption.ResponseHeadersRead);
            using var reader = new StreamReader(await response.Content.ReadAsStreamAsync());
            (await reader.ReadLineAsync()).ShouldBe("line 1");

            Signal(sample.Id, "TERM");
            string rest = await reader.ReadToEndAsync();
            rest.ShouldEndWith("line 10\n");
            using var timeout = new CancellationTokenSource(TestTimeouts.Operation);
            await sample.WaitForExitAsync(timeout.Token);
            sample.ExitCode.ShouldBe(0, await sample.StandardError.ReadToEndAsync());
        }
        finally
        {
            if (!sample.HasExited)
            {
                sample.Kill();
            }
        }
    }

    private static Process StartSample(string server)
    {
        string dll = Path.Combine(AppContext.BaseDirectory, "Falconet.Samples.AspNetCore.dll");
        var start = new ProcessStartInfo("dotnet")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (string argument in new[] { dll, "--server", server, "--urls", "http://127.0.0.1:0" })
        {
            start.ArgumentList.Add(argument);
        }

        return Process.Start(start)!;
    }

    private static async Task<Uri> ReadAddressAsync(Process sample, string serverType)
    {
        using var timeout = new CancellationTokenSource(TestTimeouts.Operation);
        string? line = await sample.StandardOutput.ReadLineAsync(timeout.Token);
        Match listening = ListeningLine().Match(line ?? string.Empty);
        listening.Success.ShouldBeTrue($"unexpected first line: {line}");
        listening.Groups["server"].Value.ShouldBe(serverType);
        return new Uri(listening.Groups["url"].Value + "/");
    }

    private static async Task StopAsync(Process sample)
    {
        if (sample.HasExited)
        {
            return;
        }

        Signal(sample.Id, "TERM");
        using var timeout = new CancellationTokenSource(TestTimeouts.Operation);
        try
        {
            await sample.WaitForExitAsync(timeout.Token);
        }
        catch (OperationCanceledException)
        {
            sample.Kill();
        }
    }

    private static void Signal(int processId, string signal)
    {
        using Process kill = Process.Start("kill", $"-{signal} {processId}");
        kill.WaitForExit();
    }

    [GeneratedRegex(@"^(?<server>\w+) listening on (?<url>http://[^\s]+)$")]
    private static partial Regex ListeningLine();
}
