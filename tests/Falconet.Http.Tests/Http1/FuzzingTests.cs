using System;
using System.Linq;
using System.Text;
using System.Threading.Tasks;
using Falconet.Fuzz;
using Shouldly;

namespace Falconet.Http.Tests.Http1;

/// <summary>A bounded run of the seeded mutation fuzzer over the connection loop, and proof that its checks can fail.</summary>
public sealed class FuzzingTests
{
    [Fact]
    public async Task Twenty_thousand_mutated_inputs_never_crash_smuggle_leak_hang_or_depend_on_the_split()
    {
        await using ConnectionFuzzTarget target = await ConnectionFuzzTarget.StartAsync();
        var fuzzer = new MutationFuzzer(FuzzSeeds.All, randomSeed: 10);
        for (int i = 0; i < 20_000; i++)
        {
            byte[] input = fuzzer.Next();
            try
            {
                target.Run(input);
            }
            catch (FuzzPropertyException exception)
            {
                throw new ShouldAssertException($"Input {i} broke a property: {exception.Message}\nInput (Latin-1): {Encoding.Latin1.GetString(input)}", exception);
            }
        }
    }

    [Fact]
    public async Task Every_seed_is_answered_and_a_refused_request_is_the_last_one_answered()
    {
        await using ConnectionFuzzTarget target = await ConnectionFuzzTarget.StartAsync(trackLeaks: true);
        foreach ((string name, byte[] bytes) in FuzzSeeds.All)
        {
            var answers = target.Exchange([bytes]);
            if (name.StartsWith("refused-then-more", StringComparison.Ordinal))
            {
                answers.ShouldNotContain(answer => answer.Body.StartsWith("GET /smuggled ", StringComparison.Ordinal), name);
            }

            answers.Take(answers.Count - 1).ShouldAllBe(answer => answer.StatusCode == 200, name);
        }
    }

    [Theory]
    [InlineData("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", "after a response that closes")]
    [InlineData("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n", "keeps the connection open")]
    [InlineData("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nabc", "shorter than its Content-Length")]
    [InlineData("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", "malformed status line")]
    [InlineData("HTTP/1.1 200 OK\r\nBad Header: x\r\nContent-Length: 0\r\n\r\n", "malformed header line")]
    [InlineData("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n", "without its end")]
    public void The_response_check_refuses_what_a_strict_client_would(string sent, string violation)
    {
        var exception = Should.Throw<FuzzPropertyException>(() => ResponseStream.Parse(Encoding.Latin1.GetBytes(sent), [KnownMethod.Get, KnownMethod.Get]));

        exception.Message.ShouldContain(violation);
    }
}
