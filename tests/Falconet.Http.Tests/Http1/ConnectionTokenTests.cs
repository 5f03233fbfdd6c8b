using Falconet.Http.Http1;
using Microsoft.Extensions.Primitives;
using Shouldly;

namespace Falconet.Http.Tests.Http1;

/// <summary>The tokens of Connection header values, found without allocating.</summary>
public sealed class ConnectionTokenTests
{
    [Theory]
    [InlineData("close", true)]
    [InlineData("Close", true)]
    [InlineData("keep-alive, close", true)]
    [InlineData("  close  ", true)]
    [InlineData("closed", false)]
    [InlineData("keep-alive", false)]
    [InlineData("", false)]
    public void Close_token_is_found_case_insensitively_in_a_list(string value, bool expected)
        => HttpConnectionTokens.ContainsClose(new StringValues(value)).ShouldBe(expected);

    [Fact]
    public void Tokens_are_found_in_any_of_several_values()
        => HttpConnectionTokens.ContainsKeepAlive(new StringValues(new[] { "upgrade", "Keep-Alive" })).ShouldBeTrue();
}
