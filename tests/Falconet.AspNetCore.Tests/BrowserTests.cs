using System;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Net.Http;
using System.Net.WebSockets;
using System.Text;
using System.Text.Json;
using System.Threading;
using System.Threading.Tasks;
using Falconet.AspNetCore.Tests.Infrastructure;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Samples.AspNetCore;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.Extensions.DependencyInjection;
using Shouldly;

namespace Falconet.AspNetCore.Tests;

/// <summary>
/// A real browser: headless Chromium loads the sample's page over HTTPS; its script fetches JSON and echoes a message through
/// a WebSocket, and the test reads what the page wrote through Chromium's DevTools protocol. On both servers.
/// </summary>
public sealed class BrowserTests
{
    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData("falconet")]
    [InlineData("kestrel")]
    public async Task Chromium_loads_the_sample_page_over_https_which_fetches_json_and_echoes_through_a_WebSocket(string server)
    {
        WebApplication app = SampleApp.Build(["--server", server, "--urls", "https://127.0.0.1:0"],
            builder => AspNetTestApp.UseTestCertificate(builder, server == "kestrel" ? WebServer.Kestrel : WebServer.FalconetLibuv));
        await app.StartAsync().WaitAsync(TestTimeouts.Operation);
        try
        {
            string address = app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.Single();
            await using var browser = await HeadlessChromium.StartAsync(address + "/");
            string result = await browser.EvaluateUntilAsync(
                "document.getElementById('result').dataset.done === 'true' ? document.getElementById('result').textContent : ''");
            result.ShouldBe("json=Hello, World!;echo=hello over https:");
        }
        finally
        {
            await app.StopAsync().WaitAsync(TestTimeouts.Operation);
            await app.DisposeAsync();
        }
    }
}

/// <summary>
/// Headless Chromium (the Debian package "chromium") on one page, driven through its DevTools protocol over a WebSocket:
/// started with a new empty profile, accepting the test's self-signed certificate, killed (with its children) on dispose.
/// </summary>
internal sealed class HeadlessChromium : IAsyncDisposable
{
    private readonly Process _process;
    private readonly string _profile;
    private readonly ClientWebSocket _devTools;
    private int _nextId;

    private HeadlessChromium(Process process, string profile, ClientWebSocket devTools)
    {
        _process = process;
        _profile = profile;
        _devTools = devTools;
    }

    public static async Task<HeadlessChromium> StartAsync(string url)
    {
        string profile = Directory.CreateTempSubdirectory("falconet-chromium-").FullName;
        var start = new ProcessStartInfo("chromium") { UseShellExecute = false, RedirectStandardError = true, RedirectStandardOutput = true };
        foreach (string argument in new[]
        {
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage", "--ignore-certificate-errors",
            "--remote-debugging-port=0", "--user-data-dir=" + profile, url,
        })
        {
            start.ArgumentList.Add(argument);
        }

        Process process = Process.Start(start)!;
        process.ErrorDataReceived += (_, _) => { };
        process.OutputDataReceived += (_, _) => { };
        process.BeginErrorReadLine();
        process.BeginOutputReadLine();
        try
        {
            // Chromium writes the port it chose into the profile: "DevToolsActivePort", the port on its first line.
            string portFile = Path.Combine(profile, "DevToolsActivePort");
            var waited = Stopwatch.StartNew();
            while (!File.Exists(portFile) || File.ReadAllLines(portFile).Length < 2)
            {
                if (process.HasExited || waited.Elapsed > TestTimeouts.Operation)
                {
                    throw new InvalidOperationException($"Chromium did not open its DevTools port (exited: {process.HasExited}).");
                }

                await Task.Delay(50);
            }

            int port = int.Parse(File.ReadAllLines(portFile)[0], System.Globalization.CultureInfo.InvariantCulture);
            using var http = new HttpClient { Timeout = TestTimeouts.Operation };
            string? pageSocket = null;
            while (pageSocket is null && waited.Elapsed < TestTimeouts.Operation)
            {
                using JsonDocument targets = JsonDocument.Parse(await http.GetStringAsync($"http://127.0.0.1:{port}/json/list"));
                pageSocket = targets.RootElement.EnumerateArray()
                    .Where(target => target.GetProperty("type").GetString() == "page")
                    .Select(target => target.GetProperty("webSocketDebuggerUrl").GetString())
                    .FirstOrDefault();
                if (pageSocket is null)
                {
                    await Task.Delay(50);
                }
            }

            var devTools = new ClientWebSocket();
            using var timeout = new CancellationTokenSource(TestTimeouts.Operation);
            await devTools.ConnectAsync(new Uri(pageSocket ?? throw new InvalidOperationException("Chromium shows no page.")), timeout.Token);
            return new HeadlessChromium(process, profile, devTools);
        }
        catch
        {
            process.Kill(entireProcessTree: true);
            process.Dispose();
            Directory.Delete(profile, recursive: true);
            throw;
        }
    }

    /// <summary>Evaluates <paramref name="expression"/> in the page every 100 ms until it gives a non-empty string (at most the test's operation timeout).</summary>
    public async Task<string> EvaluateUntilAsync(string expression)
    {
        var waited = Stopwatch.StartNew();
        string value = string.Empty;
        while (value.Length == 0 && waited.Elapsed < TestTimeouts.Operation)
        {
            value = await EvaluateAsync(expression);
            if (value.Length == 0)
            {
                await Task.Delay(100);
            }
        }

        return value;
    }

    private async Task<string> EvaluateAsync(string expression)
    {
        int id = ++_nextId;
        byte[] command = JsonSerializer.SerializeToUtf8Bytes(new
        {
            id,
            method = "Runtime.evaluate",
            @params = new { expression, returnByValue = true },
        });
        using var timeout = new CancellationTokenSource(TestTimeouts.Operation);
        await _devTools.SendAsync(command, WebSocketMessageType.Text, true, timeout.Token);

        // Events may come before the answer: read until the message with our id.
        while (true)
        {
            using var message = new MemoryStream();
            byte[] buffer = new byte[16 * 1024];
            WebSocketReceiveResult received;
            do
            {
                received = await _devTools.ReceiveAsync(buffer, timeout.Token);
                message.Write(buffer, 0, received.Count);
            }
            while (!received.EndOfMessage);

            using JsonDocument answer = JsonDocument.Parse(message.ToArray());
            if (answer.RootElement.TryGetProperty("id", out JsonElement answered) && answered.GetInt32() == id)
            {
                JsonElement result = answer.RootElement.GetProperty("result").GetProperty("result");
                return result.TryGetProperty("value", out JsonElement value) ? value.ToString() : string.Empty;
            }
        }
    }

    public async ValueTask DisposeAsync()
    {
        _devTools.Abort();
        _devTools.Dispose();
        _process.Kill(entireProcessTree: true);
        await _process.WaitForExitAsync().WaitAsync(TestTimeouts.Operation);
        _process.Dispose();
        Directory.Delete(_profile, recursive: true);
    }
}
