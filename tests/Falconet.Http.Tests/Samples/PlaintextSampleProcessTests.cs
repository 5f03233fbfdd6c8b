using System;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Net.Http;
using System.Runtime.InteropServices;
using System.Text.RegularExpressions;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Shouldly;

namespace Falconet.Http.Tests.Samples;

/// <summary>
/// The built sample as its users run it: <c>dotnet Falconet.Samples.Plaintext.dll --port 0 --stats</c>, served over
/// HTTP, stopped with SIGINT. The project reference to the sample builds it and copies it next to the tests.
/// </summary>
public sealed partial class PlaintextSampleProcessTests
{
    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Sample_serves_both_endpoints_then_stops_on_SIGINT_and_prints_its_stats()
    {
        using SampleProcess sample = SampleProcess.Start(descriptorLimit: null, "--port", "0", "--stats");
        Uri url = await sample.WaitUntilListeningAsync();

        using var http = new HttpClient { BaseAddress = url, Timeout = TestTimeouts.Operation };
        using (HttpResponseMessage plaintext = await http.GetAsync("plaintext"))
        {
            await CheckTechEmpowerResponse(plaintext, "text/plain", "Hello, World!");
        }

        using (HttpResponseMessage json = await http.GetAsync("json"))
        {
            await CheckTechEmpowerResponse(json, "application/json", "{\"message\":\"Hello, World!\"}");
        }

        (int exitCode, string rest, string errors) = await sample.InterruptAsync();
        exitCode.ShouldBe(0, $"stderr: {errors}");
        Match stats = StatsLine().Match(rest);
        stats.Success.ShouldBeTrue($"no stats line in: {rest}");
        long.Parse(stats.Groups["requests"].Value, CultureInfo.InvariantCulture).ShouldBe(2);
        rest.ShouldContain("connections_open=0 blocks_outstanding=0 ");
    }

    private static async Task CheckTechEmpowerResponse(HttpResponseMessage response, string contentType, string body)
    {
        ((int)response.StatusCode).ShouldBe(200);
        response.Version.ShouldBe(new Version(1, 1));
        response.Headers.Server.ToString().ShouldBe("Falconet");
        response.Headers.Date.ShouldNotBeNull();
        response.Headers.GetValues("Date").ShouldHaveSingleItem().Length.ShouldBe(29);
        response.Content.Headers.ContentType!.ToString().ShouldBe(contentType);
        response.Content.Headers.ContentLength.ShouldBe(body.Length);
        (await response.Content.ReadAsStringAsync()).ShouldBe(body);
    }

    // The sample runs on io_uring by default where it can be used (the test machines can): the line says how connections spread over the loops.
    [GeneratedRegex(@"^requests=(?<requests>\d+) allocated_bytes_per_request=\d+\.\d{2} gen0=\d+ gen1=\d+ gen2=\d+ accepted_per_loop=\d+(/\d+)*$", RegexOptions.Multiline)]
    private static partial Regex StatsLine();
}
