using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Net.Http;
using System.Text.RegularExpressions;
using System.Threading;
using System.Threading.Tasks;
using Falconet.AspNetCore.Tests.Conformance;
using Falconet.AspNetCore.Tests.Infrastructure;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Samples.AspNetCore;
using Falconet.Samples.AspNetCore.Grpc;
using Grpc.Core;
using Grpc.Net.Client;
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

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData("falconet", "FalconetWebServer")]
    [InlineData("kestrel", "KestrelServerImpl")]
    public async Task An_https_url_is_served_with_the_development_certificate_where_one_is_installed(string server, string serverType)
    {
        // A home of its own: the development certificate goes into that user's store, as 'dotnet dev-certs https' puts it.
        using var home = new TemporaryHome();
        await HttpsTests.RunAsync("env", $"HOME={home.Path}", $"DOTNET_CLI_HOME={home.Path}", "DOTNET_NOLOGO=1", "dotnet", "dev-certs", "https");
        string thumbprint = Path.GetFileNameWithoutExtension(
            Directory.GetFiles(Path.Combine(home.Path, ".dotnet", "corefx", "cryptography", "x509stores", "my"), "*.pfx").Single());

        using Process sample = StartSample(server, "https://127.0.0.1:0", home.Path);
        try
        {
            Uri address = await ReadAddressAsync(sample, serverType);
            address.Scheme.ShouldBe("https");
            string? presented = null;
            using var http = new HttpClient(new SocketsHttpHandler
            {
                SslOptions = { RemoteCertificateValidationCallback = (_, certificate, _, _) => (presented = certificate?.GetCertHashString()) is not null },
            })
            { BaseAddress = address, Timeout = TestTimeouts.Operation };
            (await http.GetStringAsync("json")).ShouldBe("{\"message\":\"Hello, World!\"}");
            presented.ShouldBe(thumbprint);
        }
        finally
        {
            await StopAsync(sample);
        }
    }

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData("falconet", "dotnet dev-certs https")]
    [InlineData("kestrel", "dotnet dev-certs https")]
    public async Task An_https_url_without_any_certificate_fails_the_start_with_a_message_that_says_how_to_make_one(string server, string advice)
    {
        using var home = new TemporaryHome();
        using Process sample = StartSample(server, "https://127.0.0.1:0", home.Path);
        Task<string> error = sample.StandardError.ReadToEndAsync();
        await sample.WaitForExitAsync().WaitAsync(TestTimeouts.Operation);
        sample.ExitCode.ShouldNotBe(0);
        string message = await error;
        message.ShouldContain(advice);
        if (server == "falconet")
        {
            message.ShouldContain("Falconet cannot serve https://127.0.0.1:0: no server certificate was given for it");
        }
    }

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData("falconet", "FalconetWebServer", "Falconet", false)]
    [InlineData("falconet", "FalconetWebServer", "Falconet", true)]
    [InlineData("kestrel", "KestrelServerImpl", "Kestrel", false)]
    [InlineData("kestrel", "KestrelServerImpl", "Kestrel", true)]
    public async Task The_samples_greeter_answers_Grpc_Net_Client_over_h2c_and_over_TLS(string server, string serverType, string section, bool tls)
    {
        // As the docs run it: h2c on a plain address (Falconet's default takes the HTTP/2 preface beside HTTP/1.1; Kestrel
        // takes prior knowledge only on an HTTP/2-only endpoint), or an https address with PEM files as the default
        // certificate, where ALPN picks h2.
        using var files = new CertificateFiles();
        (string certificate, string key) = files.WritePem(TestCertificates.Server, "server");
        string[] settings = tls
            ? [$"--{section}:Certificates:Default:Path", certificate, $"--{section}:Certificates:Default:KeyPath", key]
            : server == "kestrel" ? [$"--{section}:EndpointDefaults:Protocols", "Http2"] : [];
        using Process sample = StartSample(server, tls ? "https://127.0.0.1:0" : "http://127.0.0.1:0", extra: settings);
        try
        {
            Uri address = await ReadAddressAsync(sample, serverType);
            address.Scheme.ShouldBe(tls ? "https" : "http");
            using var channel = GrpcChannel.ForAddress(address, new GrpcChannelOptions
            {
                HttpHandler = new SocketsHttpHandler { SslOptions = TestCertificates.ClientOptions() },
            });
            var client = new Greeter.GreeterClient(channel);
            var deadline = new CallOptions(deadline: DateTime.UtcNow + TestTimeouts.Operation);

            HelloReply reply = await client.SayHelloAsync(new HelloRequest { Name = "gRPC" }, deadline);
            reply.Message.ShouldBe("Hello, gRPC!");

            using AsyncServerStreamingCall<HelloReply> stream = client.SayHellos(new HellosRequest { Name = "stream", Count = 3 }, deadline);
            var messages = new List<string>();
            await foreach (HelloReply hello in stream.ResponseStream.ReadAllAsync())
            {
                messages.Add(hello.Message);
            }

            messages.ShouldBe(["Hello, stream! (1)", "Hello, stream! (2)", "Hello, stream! (3)"]);

            RpcException refused = await Should.ThrowAsync<RpcException>(async () =>
            {
                using AsyncServerStreamingCall<HelloReply> tooMany = client.SayHellos(
                    new HellosRequest { Name = "x", Count = GreeterService.MaxHellos + 1 }, deadline);
                await tooMany.ResponseStream.MoveNext();
            });
            refused.StatusCode.ShouldBe(StatusCode.InvalidArgument);
        }
        finally
        {
            await StopAsync(sample);
        }
    }

    private static Process StartSample(string server, string urls = "http://127.0.0.1:0", string? home = null, string[]? extra = null)
    {
        string dll = Path.Combine(AppContext.BaseDirectory, "Falconet.Samples.AspNetCore.dll");
        var start = new ProcessStartInfo("dotnet")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (string argument in new[] { dll, "--server", server, "--urls", urls }.Concat(extra ?? []))
        {
            start.ArgumentList.Add(argument);
        }

        if (home is not null)
        {
            start.Environment["HOME"] = home;
            start.Environment["DOTNET_CLI_HOME"] = home;
        }

        return Process.Start(start)!;
    }

    private static async Task<Uri> ReadAddressAsync(Process sample, string serverType)
    {
        // The sample logs warnings only (Kestrel warns of an untrusted development certificate first).
        using var timeout = new CancellationTokenSource(TestTimeouts.Operation);
        string? line;
        Match listening;
        int lines = 0;
        do
        {
            line = await sample.StandardOutput.ReadLineAsync(timeout.Token);
            listening = ListeningLine().Match(line ?? string.Empty);
        }
        while (!listening.Success && line is not null && ++lines < 20);

        listening.Success.ShouldBeTrue($"no address line; the last line: {line}");
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

    [GeneratedRegex(@"^(?<server>\w+) listening on (?<url>https?://[^\s]+)$")]
    private static partial Regex ListeningLine();
}

/// <summary>An empty home folder for a child process (its own certificate store), deleted afterwards.</summary>
internal sealed class TemporaryHome : IDisposable
{
    public string Path { get; } = Directory.CreateTempSubdirectory("falconet-home-").FullName;

    public void Dispose() => Directory.Delete(Path, recursive: true);
}
