"""People and access: users and their roles, raters (invitations, quotas, pauses, password links,
the automatic pause by rater quality), API tokens and sign-in limits."""
