using System;
using Shouldly;

namespace Falconet.Http.Parsing.Tests;

/// <summary>The limits' defaults, validation, and the read-only shared instance.</summary>
public sealed class HttpLimitsTests
{
    [Fact]
    public void Default_limits_have_the_documented_values()
    {
        HttpLimits limits = HttpLimits.Default;

        limits.MaxRequestLineSize.ShouldBe(8 * 1024);
        limits.MaxRequestHeadersSize.ShouldBe(32 * 1024);
        limits.MaxRequestHeaderCount.ShouldBe(100);
        limits.MaxRequestBodySize.ShouldBe(30_000_000);
        limits.MaxChunkExtensionSize.ShouldBe(4 * 1024);
    }

    [Fact]
    public void Default_limits_cannot_be_changed()
    {
        Should.Throw<InvalidOperationException>(() => HttpLimits.Default.MaxRequestLineSize = 1).ShouldBeOfType<InvalidOperationException>();
        Should.Throw<InvalidOperationException>(() => HttpLimits.Default.MaxRequestBodySize = 1).ShouldBeOfType<InvalidOperationException>();
    }

    [Fact]
    public void New_limits_reject_values_that_are_not_positive()
    {
        var limits = new HttpLimits();

        Should.Throw<ArgumentOutOfRangeException>(() => limits.MaxRequestHeaderCount = 0).ShouldBeOfType<ArgumentOutOfRangeException>();
        Should.Throw<ArgumentOutOfRangeException>(() => limits.MaxRequestBodySize = -1).ShouldBeOfType<ArgumentOutOfRangeException>();
        limits.MaxRequestBodySize = 0;
        limits.MaxRequestBodySize.ShouldBe(0);
    }
}
