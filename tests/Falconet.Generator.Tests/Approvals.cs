using Shouldly;

namespace Falconet.Generator.Tests;

/// <summary>Approved-text snapshots stored next to the calling test file as *.approved.txt.</summary>
internal static class Approvals
{
    /// <summary>Compares <paramref name="text"/> with the approved file of the calling test and discriminator; never opens a diff tool.</summary>
    public static void ShouldMatchApprovedFile(this string text, string discriminator) =>
        text.ShouldMatchApproved(c => c.WithDiscriminator(discriminator).UseCallerLocation().NoDiff());
}
