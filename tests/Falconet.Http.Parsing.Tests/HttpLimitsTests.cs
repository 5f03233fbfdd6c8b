using System;

namespace Falconet.Http.Parsing.Tests;

/// <summary>The limits' defaults, validation, and the read-only shared instance.</summary>
public sealed class HttpLimitsTests
{
    [Fact]
    public void Default_limits_have_the_documented_values()
    {
        HttpLimits limits = HttpLimits.Default;

        Assert.Equal(8 * 1024, limits.MaxRequestLineSize);
        Assert.Equal(32 * 1024, limits.MaxRequestHeadersSize);
        Assert.Equal(100, limits.MaxRequestHeaderCount);
        Assert.Equal(30_000_000, limits.MaxRequestBodySize);
        Assert.Equal(4 * 1024, limits.MaxChunkExtensionSize);
    }

    [Fact]
    public void Default_limits_cannot_be_changed()
    {
        Assert.Throws<InvalidOperationException>(() => HttpLimits.Default.MaxRequestLineSize = 1);
        Assert.Throws<InvalidOperationException>(() => HttpLimits.Default.MaxRequestBodySize = 1);
    }

    [Fact]
    public void New_limits_reject_values_that_are_not_positive()
    {
        var limits = new HttpLimits();

        Assert.Throws<ArgumentOutOfRangeException>(() => limits.MaxRequestHeaderCount = 0);
        Assert.Throws<ArgumentOutOfRangeException>(() => limits.MaxRequestBodySize = -1);
        limits.MaxRequestBodySize = 0;
        Assert.Equal(0, limits.MaxRequestBodySize);
    }
}
